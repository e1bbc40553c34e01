import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

/// Bounds on what a person can add: custom phrases and shortcuts are refused
/// past their limit with a message that says which limit.
@Suite struct LimitsTests {
    static let coffee = (app: "CoffeeMaker", intent: "orderDrink",
                         parameters: ["coffeeDrink": "latte", "size": "large", "roast": "light roast", "milkAmount": "a bit of soy milk"])
    static let words = ["apple", "river", "lamp", "garden", "window", "yellow", "music", "morning", "kitchen", "blanket",
                        "pepper", "silver", "rocket", "forest", "candle"]

    @Test func customPhrasesStopAtTheLimitWithAClearRefusal() async throws {
        let h = try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker")
        // One fewer than the limit, stored directly (compiling each one through
        // the engine would only slow the test), then the last one through it.
        for n in 0..<199 {
            let phrase = "\(Self.words[n % 15]) \(Self.words[(n / 15) % 15]) \(Self.words[n / 225]) mode"
            try await h.customPhrases.save(CustomPhrase(phrase: phrase, app: Self.coffee.app, intent: Self.coffee.intent,
                                                        parameters: Self.coffee.parameters, created: .distantPast))
        }
        try await h.engine.addCustomPhrase("the last one", app: Self.coffee.app, intent: Self.coffee.intent, parameters: Self.coffee.parameters)
        #expect(try await h.engine.customPhrases().count == 200)
        let refusal = await #expect(throws: IntentError.self) {
            try await h.engine.addCustomPhrase("one too many", app: Self.coffee.app, intent: Self.coffee.intent, parameters: Self.coffee.parameters)
        }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("already 200 custom phrases"))
        #expect(try await h.engine.customPhrases().count == 200)
        // Deleting one makes room again.
        #expect(try await h.engine.deleteCustomPhrase("the last one"))
        try await h.engine.addCustomPhrase("one too many", app: Self.coffee.app, intent: Self.coffee.intent, parameters: Self.coffee.parameters)
    }

    @Test func aPhraseHasAtMostTwelveWords() async throws {
        let h = try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker")
        let twelve = Self.words.prefix(12).joined(separator: " ")
        try await h.engine.addCustomPhrase(twelve, app: Self.coffee.app, intent: Self.coffee.intent, parameters: Self.coffee.parameters)
        let refusal = await #expect(throws: IntentError.self) {
            try await h.engine.addCustomPhrase(twelve + " please", app: Self.coffee.app, intent: Self.coffee.intent,
                                               parameters: Self.coffee.parameters)
        }
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("has 13 words; a phrase may have at most 12"))
    }

    static func shortcut(_ n: Int) -> String { "name: S\(n)\nactions:\n  - speak: hello \(n)\n" }

    @Test func aFolderLoadsAtMostTheShortcutLimitAndNamesTheRest() throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: "Coffee Maker")
        let environment = ShortcutEnvironment(registry: registry, inputNames: [])
        let parsed = (0..<(ShortcutLibrary.maximumShortcuts + 2)).map { n -> (file: String, result: Result<Shortcut, ShortcutFileError>) in
            let file = "s\(n).yaml"
            do throws(ShortcutFileError) { return (file, .success(try ShortcutLoader.parse(yaml: Self.shortcut(n), file: file))) } catch {
                return (file, .failure(error))
            }
        }
        let library = ShortcutLibrary.check(parsed, environment: environment)
        #expect(library.shortcuts.count == ShortcutLibrary.maximumShortcuts)
        #expect(library.problems.map(\.description) == [100, 101].map {
            "s\($0).yaml:1:7: not loaded: the device keeps at most 100 shortcuts; remove one first"
        })
    }

    @Test func aShortcutFilePastTheSizeLimitIsRefusedUnread() throws {
        let file = NSTemporaryDirectory() + "parley-big-\(UUID().uuidString.prefix(8)).yaml"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let exact = Self.shortcut(1) + "# " + String(repeating: "x", count: ShortcutLoader.maximumFileBytes - Self.shortcut(1).utf8.count - 2)
        try exact.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try ShortcutLoader.load(file: file).name == "S1")
        try (exact + "x").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ShortcutFileError.self) { try ShortcutLoader.load(file: file) }
        do throws(ShortcutFileError) { _ = try ShortcutLoader.load(file: file) } catch {
            #expect(error.description == "\(file):1:1: is 262145 bytes; a shortcut file may have at most 262144")
        }
    }

    /// Nested aliases cost exponential time and memory once followed (the
    /// shortcut reader recurses through every step); refused at the first
    /// anchor, with its place, before anything is composed.
    @Test func anAliasBombInAShortcutIsRefusedAtItsFirstAnchor() {
        var yaml = "name: Bomb\nwhen: { say: bomb }\nl0: &l0 [{ say: lol }, { say: lol }, { say: lol }, { say: lol }]\n"
        for level in 1..<12 { yaml += "l\(level): &l\(level) [*l\(level - 1), *l\(level - 1), *l\(level - 1), *l\(level - 1)]\n" }
        yaml += "actions: *l11\n"
        #expect(throws: ShortcutFileError.self) { try ShortcutLoader.parse(yaml: yaml, file: "bomb.yaml") }
        do throws(ShortcutFileError) { _ = try ShortcutLoader.parse(yaml: yaml, file: "bomb.yaml") } catch {
            #expect(error.description == "bomb.yaml:3:5: an anchor (&l0) is not accepted in a shortcut file; write the value out in full")
        }
    }
}
