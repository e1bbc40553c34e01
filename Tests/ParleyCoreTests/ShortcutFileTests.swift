import Foundation
import ParleyApps
import ParleyCore
import Testing

/// Shortcut files: parsed, checked against the bundled apps, and every load
/// error named as `FILE:LINE:COLUMN: reason`.
@Suite struct ShortcutFileTests {
    static let registry = try! AppRegistry(apps: BundledApps.all, primaryApp: "Coffee Maker")
    static let environment = ShortcutEnvironment(registry: registry, inputNames: ["door", "motion"])

    /// The problems of files checked together (name -> YAML), in order.
    func problems(_ files: [String: String]) -> [String] {
        library(files).problems.map(\.description)
    }

    func library(_ files: [String: String]) -> ShortcutLibrary {
        let parsed = files.keys.sorted().map { name -> (file: String, result: Result<Shortcut, ShortcutFileError>) in
            do throws(ShortcutFileError) {
                return (name, .success(try ShortcutLoader.parse(yaml: files[name]!, file: name)))
            } catch {
                return (name, .failure(error))
            }
        }
        return ShortcutLibrary.check(parsed, environment: Self.environment)
    }

    func problems(_ yaml: String) -> [String] { problems(["lunch.yaml": yaml]) }

    static let lunch = """
        name: Lunch                 # unique; how it is listed and run by name
        phrases: [lunch time]
        triggers:
          - button: double-press
          - time: "07:30"
            days: [mon, tue, wed, thu, fri]
          - input: door
            edge: rising
        actions:
          - set: place
            to: lewis
          - run: SoupChef.OrderSoup
            with:
              soup: ask
              quantity: 2
              orderType: pickup
              store: "{place}"
            as: order
          - speak: "Total {order.total}."
        """

    @Test func theIssuesExampleLoads() throws {
        let loaded = library(["lunch.yaml": Self.lunch])
        #expect(loaded.problems.isEmpty, "\(loaded.problems)")
        let shortcut = try #require(loaded.shortcut(named: "lunch"))
        #expect(shortcut.name == "Lunch")
        #expect(shortcut.phrases.map(\.text) == ["lunch time"])
        #expect(shortcut.triggers.map(\.trigger) == [
            .button(.doublePress),
            .time(TimeOfDay(hour: 7, minute: 30)!, days: [.monday, .tuesday, .wednesday, .thursday, .friday]),
            .input(name: "door", edge: .rising),
        ])
        guard case .run(let app, let intent, let values, let name) = shortcut.actions[1].action else {
            Issue.record("not a run: \(shortcut.actions[1])")
            return
        }
        #expect(app == "SoupChef" && intent == "OrderSoup" && name == "order")
        #expect(values["soup"] == .ask(prompt: nil))
        #expect(values["quantity"] == .value("2"))
        #expect(values["store"].flatMap { source -> String? in if case .template(let t) = source { t.soleVariable?.name } else { nil } } == "place")
        #expect(shortcut.actions[1].location == SourceLocation(file: "lunch.yaml", line: 12, column: 5))
    }

    @Test func theSummaryReadsEachIntentsParameterSummary() throws {
        let shortcut = try #require(library(["lunch.yaml": Self.lunch]).shortcut(named: "Lunch"))
        #expect(ShortcutSummary.describe(shortcut, registry: Self.registry)
            == "Set place to \"lewis\", then order two soup for pick up, asking which soup, then say \"Total the order total.\".")
        let builtins = try ShortcutLoader.parse(yaml: """
            name: Morning
            actions:
              - ask: "Coffee or tea?"
                as: drink
                options: [coffee, tea]
              - if: drink
                equals: coffee
                then:
                  - run: CoffeeMaker.orderDrink
                    with: { coffeeDrink: latte, size: large }
                else:
                  - speak: Tea it is.
              - repeat: 2
                do:
                  - sound: chime
              - wait: 30
              - led: success
              - shortcut: Lunch
              - choose: Which radio?
                options: [news, music]
                as: station
            """, file: "morning.yaml")
        #expect(ShortcutSummary.describe(builtins, registry: Self.registry) == """
            Ask "Coffee or tea?" (coffee or tea), then if the drink is coffee, order a large latte, otherwise say "Tea it is.", \
            then twice: play the chime sound, then wait thirty seconds, then show success on the lights, then run the shortcut Lunch, \
            then ask "Which radio?" (news or music).
            """)
    }

    @Test func everyBuiltInActionAndAskWithAQuestionParse() throws {
        let shortcut = try ShortcutLoader.parse(yaml: """
            name: All
            actions:
              - run: SoupChef.OrderSoup
                with: { soup: { ask: "Which soup today?" }, quantity: ask }
              - ask: How many minutes?
                as: minutes
                type: number
              - repeat:
                times: 3
                do:
                  - speak: "Round {index}"
              - set: note
                to: "{minutes} minutes"
              - if: minutes
                above: 10
                then: [{ speak: long }]
              - wait: 1.5
              - sound: wake
              - led: awaiting-confirmation
            """, file: "all.yaml")
        #expect(shortcut.actions.map(\.action.key) == ["run", "ask", "repeat", "set", "if", "wait", "sound", "led"])
        guard case .run(_, _, let values, _) = shortcut.actions[0].action else { Issue.record("not a run"); return }
        #expect(values == ["soup": .ask(prompt: "Which soup today?"), "quantity": .ask(prompt: nil)])
        #expect(shortcut.actions[2].action == .repeat(times: 3, do: [ShortcutStep(.speak(TextTemplate(parts: [
            .text("Round "), .variable(VariableReference(name: "index", location: SourceLocation(file: "all.yaml", line: 11, column: 23))),
        ])), at: SourceLocation(file: "all.yaml", line: 11, column: 9))]))
        #expect(shortcut.actions[5].action == .wait(seconds: 1.5))
        #expect(library(["all.yaml": """
            name: All
            actions:
              - ask: How many minutes?
                as: minutes
                type: number
              - if: minutes
                above: 10
                then: [{ speak: "{minutes} is long" }]
            """]).problems.isEmpty)
    }

    // MARK: Load errors, one test each

    @Test func anUnknownActionIsNamed() {
        #expect(problems("name: X\nactions:\n  - shout: hello\n")
            == ["lunch.yaml:3:5: unknown action 'shout'; expected one of run, speak, ask, choose, if, repeat, wait, set, led, sound, shortcut"])
    }

    @Test func anUnknownAppIntentAndParameterAreNamed() {
        #expect(problems("name: X\nactions:\n  - run: PizzaPlace.Order\n")
            == ["lunch.yaml:3:5: there is no app 'PizzaPlace'; installed: CoffeeMaker, SoupChef, Timer, Notes"])
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderPizza\n")
            == ["lunch.yaml:3:5: there is no intent 'OrderPizza' in SoupChef; it has OrderSoup"])
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderSoup\n    with:\n      spoon: big\n")
            == ["lunch.yaml:5:14: 'spoon' is not a parameter of SoupChef.OrderSoup; it has portion, soup, quantity, orderType, store, deliveryAddress"])
        #expect(problems("name: X\nactions:\n  - run: SoupChef\n")
            == ["lunch.yaml:3:10: `run: SoupChef` must name <app identifier>.<intent identifier>, e.g. SoupChef.OrderSoup"])
    }

    @Test func aValueOutsideAnEnumOrItsBoundsIsNamed() {
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderSoup\n    with: { soup: pea }\n")
            == ["lunch.yaml:4:19: 'pea' is not a value of soup; expected one of clamChowder, tomato, chickenNoodle"])
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderSoup\n    with: { quantity: 12 }\n")
            == ["lunch.yaml:4:23: quantity 12 is out of range: Only ten soups can be ordered at once."])
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderSoup\n    with: { quantity: lots }\n")
            == ["lunch.yaml:4:23: quantity needs a whole number, not 'lots'"])
    }

    @Test func aVariableUsedBeforeItIsDefinedIsNamed() {
        #expect(problems("name: X\nactions:\n  - speak: \"Total {order.total}\"\n  - run: SoupChef.OrderSoup\n    as: order\n")
            == ["lunch.yaml:3:19: the variable 'order' is used before any action defines it"])
        // Defined in one branch only: not defined after the `if`.
        #expect(problems("""
            name: X
            actions:
              - ask: Hungry?
                as: hungry
                type: yes-no
              - if: hungry
                then:
                  - run: SoupChef.OrderSoup
                    as: order
              - speak: "{order.total}"
            """) == ["lunch.yaml:10:13: the variable 'order' is used before any action defines it"])
    }

    @Test func anUnknownPropertyOrAPropertyOfAPlainValueIsNamed() {
        #expect(problems("name: X\nactions:\n  - run: SoupChef.OrderSoup\n    as: order\n  - speak: \"{order.price}\"\n")
            == ["lunch.yaml:5:13: SoupChef.OrderSoup gives no 'price'; its output has total, readyTime"])
        #expect(problems("name: X\nactions:\n  - set: a\n    to: b\n  - speak: \"{a.b}\"\n")
            == ["lunch.yaml:5:13: 'a' holds a single value, not an intent's output: it has no property 'b'"])
    }

    @Test func aLoopOfShortcutsIsRefusedAndTheOthersLoad() {
        let loaded = library([
            "a.yaml": "name: A\nactions:\n  - shortcut: B\n",
            "b.yaml": "name: B\nactions:\n  - speak: hi\n  - shortcut: A\n",
            "c.yaml": "name: C\nactions:\n  - shortcut: C\n",
            "d.yaml": "name: D\nactions:\n  - shortcut: A\n",
            "e.yaml": "name: E\nactions:\n  - speak: fine\n",
        ])
        #expect(loaded.problems.map(\.description) == [
            "a.yaml:3:5: runs 'B', which leads back to 'A' (A → B → A); shortcuts may not run each other in a loop",
            "b.yaml:4:5: runs 'A', which leads back to 'B' (B → A → B); shortcuts may not run each other in a loop",
            "c.yaml:3:5: 'C' runs itself; shortcuts may not run each other in a loop",
            "d.yaml:3:5: runs the shortcut 'A', which did not load (see its problems)",
        ])
        #expect(loaded.shortcuts.map(\.name) == ["E"])
    }

    @Test func aPhraseTheDeviceAlreadyUnderstandsIsRefused() {
        #expect(problems("name: X\nphrases: [order soup with soup chef]\nactions:\n  - speak: hi\n")
            == ["lunch.yaml:2:11: the phrase 'order soup with soup chef' clashes with Soup Chef's \"Order soup\", which the device already understands"])
        #expect(problems("name: X\nphrases:\n  - what can you do\nactions:\n  - speak: hi\n")
            == ["lunch.yaml:3:5: the phrase 'what can you do' clashes with the built-in command 'help', which the device already understands"])
        // Two shortcuts with one phrase: the first file keeps it.
        #expect(problems(["a.yaml": "name: A\nphrases: [soup o'clock]\nactions: [{speak: a}]\n",
                          "b.yaml": "name: B\nphrases: [Soup O'Clock]\nactions: [{speak: b}]\n"])
            == ["b.yaml:2:11: the phrase 'Soup O'Clock' is already the shortcut 'A''s (a.yaml:2:11)"])
    }

    @Test func aMalformedTimeOrDayIsNamed() {
        #expect(problems("name: X\ntriggers:\n  - time: \"7.30\"\nactions: [{speak: a}]\n")
            == ["lunch.yaml:3:11: malformed time '7.30'; expected a 24-hour local time HH:MM such as \"07:30\""])
        #expect(problems("name: X\ntriggers:\n  - time: \"25:00\"\nactions: [{speak: a}]\n")
            == ["lunch.yaml:3:11: malformed time '25:00'; expected a 24-hour local time HH:MM such as \"07:30\""])
        // Unquoted, YAML 1.1 would read 07:30 as a number; the text is kept as written.
        #expect(problems("name: X\ntriggers:\n  - time: 07:30\n    days: [mon, funday]\nactions: [{speak: a}]\n")
            == ["lunch.yaml:4:17: unknown day 'funday'; expected mon, tue, wed, thu, fri, sat or sun"])
    }

    @Test func unknownTriggersGesturesAndInputsAreNamed() {
        #expect(problems("name: X\ntriggers:\n  - button: triple-press\n  - input: garage\n  - sunrise: yes\nactions: [{speak: a}]\n") == [
            "lunch.yaml:3:13: unknown button gesture 'triple-press'; expected press, double-press or long-press",
            "lunch.yaml:5:5: unknown trigger 'sunrise'; expected button, time or input",
        ])
        #expect(problems("name: X\ntriggers:\n  - input: garage\nactions: [{speak: a}]\n")
            == ["lunch.yaml:3:5: there is no input line 'garage'; the board file's inputs are door, motion"])
    }

    @Test func shapeErrorsAreNamed() {
        #expect(problems("name: X\nactions:\n  - speak: hi\ncolour: red\n")
            == ["lunch.yaml:4:1: unknown key 'colour' in a shortcut; expected one of name, description, phrases, triggers, actions"])
        #expect(problems("phrases: [x]\nactions: [{speak: a}]\n") == ["lunch.yaml:1:1: missing `name:` (the shortcut's unique name)"])
        #expect(problems("name: X\n") == ["lunch.yaml:1:1: missing `actions:` (the list of what the shortcut does)"])
        #expect(problems("name: X\nactions:\n  - ask: Why?\n") == ["lunch.yaml:3:5: an `ask` action needs `as:` naming the variable that receives the answer"])
        #expect(problems("name: X\nactions:\n  - speak: \"a {b\"\n") == ["lunch.yaml:3:15: '{' opens a variable that is never closed with '}' in speak"])
        #expect(problems("name: X\nactions:\n  - wait: forever\n") == ["lunch.yaml:3:11: `wait:` must be a number of seconds from 0 to 3600 (got 'forever')"])
        #expect(problems("name: X\nactions:\n  - led: purple\n")
            == ["lunch.yaml:3:10: unknown LED state 'purple'; expected idle, listening, thinking, speaking, awaiting-confirmation, success, error, muted"])
        #expect(problems("name: X\nactions:\n  - shortcut: Nowhere\n") == ["lunch.yaml:3:5: there is no shortcut named 'Nowhere'"])
        #expect(problems("name: X\nactions: [\n") .first?.hasPrefix("lunch.yaml:3:1: YAML syntax: ") == true)
        #expect(problems("") == ["lunch.yaml:1:1: the file is empty; a shortcut needs at least `name:` and `actions:`"])
    }

    @Test func aDuplicateNameKeepsTheFirstFileAndBadFilesDoNotStopTheOthers() {
        let loaded = library([
            "a.yaml": "name: Lunch\nactions: [{speak: a}]\n",
            "b.yaml": "name: lunch\nactions: [{speak: b}]\n",
            "c.yaml": "name: Broken\nactions: [{run: Nope.Nothing}]\n",
            "d.yaml": "name: Fine\nactions: [{speak: d}]\n",
        ])
        #expect(loaded.problems.map(\.description) == [
            "b.yaml:1:7: another shortcut is already named 'Lunch' (a.yaml:1:7)",
            "c.yaml:2:11: there is no app 'Nope'; installed: CoffeeMaker, SoupChef, Timer, Notes",
        ])
        #expect(loaded.shortcuts.map(\.name) == ["Fine", "Lunch"])
    }

    @Test func aFolderIsLoadedFromDisk() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shortcuts-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(Self.lunch.utf8).write(to: dir.appendingPathComponent("lunch.yaml"))
        try Data("name: Bad\nactions: 3\n".utf8).write(to: dir.appendingPathComponent("bad.yml"))
        try Data("not a shortcut".utf8).write(to: dir.appendingPathComponent("notes.txt"))
        let loaded = ShortcutLibrary.load(directory: dir.path, environment: Self.environment)
        #expect(loaded.shortcuts.map(\.name) == ["Lunch"])
        #expect(loaded.problems.map(\.description) == ["\(dir.path)/bad.yml:2:10: `actions:` must be a list of actions"])
    }
}
