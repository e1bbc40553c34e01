import Foundation
import ParleyExternal
import ParleyIntents
import Testing

/// Every rule a manifest is checked against, each refused with FILE:LINE:COLUMN: reason.
@Suite struct ManifestTests {
    let log = RecordedLog()

    func load(_ text: String, installed: [AppDescription] = builtInApps) throws -> Result<ExternalApp, ManifestErrors> {
        let folder = try AppFolder()
        defer { folder.remove() }
        try folder.write("manifest.yaml", text)
        do {
            return .success(try ExternalApp.load(folder: folder.url, installed: installed, logger: log.logger))
        } catch {
            // Errors name the manifest by its path; tests compare what follows it.
            return .failure(ManifestErrors(error.errors.map { ManifestError(file: "manifest.yaml", mark: $0.mark, reason: $0.reason) }))
        }
    }

    func errors(_ text: String, installed: [AppDescription] = builtInApps) throws -> [String] {
        switch try load(text, installed: installed) {
        case .success: return []
        case .failure(let errors): return errors.errors.map(\.description)
        }
    }

    @Test func theIssuesExampleLoadsAsAnAppDescription() throws {
        let app = try load(manifest()).get()
        let description = app.description
        #expect(description.identifier == "KitchenLights")
        #expect(description.allNames == ["Kitchen Lights", "the lights"])
        #expect(description.isExternal)
        let intent = try #require(description.intent("SetLight"))
        #expect(intent.category == .set && !intent.requiresConfirmation)
        #expect(intent.parameters.map(\.name) == ["room", "state", "brightness"])
        #expect(intent.parameter("room")?.staticOptions?.map(\.id) == ["kitchen", "hall"])
        #expect(intent.parameter("room")?.staticOptions?.first?.synonyms == ["cooker"])
        #expect(intent.parameter("brightness")?.bounds?.violation(101) == "Brightness goes up to one hundred.")
        #expect(intent.parameter("brightness")?.isOptional == true)
        #expect(intent.summary(values: ["room": "kitchen", "state": "on"]) == "Turn on the kitchen light")
        #expect(description.shortcuts.map(\.phrases) == [["switch the {room} light with {app}", "use {app}"]])
        #expect(app.manifest.handler == ["python3", "handler.py"])
    }

    @Test func bothExampleAppsInTheProjectAreValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var installed = builtInApps
        for name in ["kitchen-lights", "shopping-list"] {
            let app = try ExternalApp.load(folder: root.appendingPathComponent("examples/apps/\(name)"), installed: installed, logger: log.logger)
            installed.append(app.description)
        }
        #expect(installed.suffix(2).map(\.identifier) == ["KitchenLights", "ShoppingList"])
    }

    @Test func yamlSyntaxErrorsNameTheirPlace() throws {
        #expect(try errors("identifier: [unclosed\nname: x\n") == ["manifest.yaml:2:5: not valid YAML: did not find expected ',' or ']' (while parsing a flow sequence)"])
        #expect(try errors("") == ["manifest.yaml:1:1: the manifest is empty"])
        #expect(try errors("- a list\n") == ["manifest.yaml:1:1: the manifest must be a mapping with keys identifier, name, synonyms, handler, intents, shortcuts, not a list"])
    }

    @Test func missingAndUnknownKeys() throws {
        #expect(try errors("identifier: A\nname: A\nhandler: [sh]\ncolour: red\n") == [
            "manifest.yaml:1:1: the manifest is missing the required key 'intents'",
            "manifest.yaml:4:1: unknown key 'colour' in the manifest; expected one of identifier, name, synonyms, handler, intents, shortcuts",
        ])
        let text = manifest(extraIntents: "  - identifier: Other\n    titel: x\n")
        #expect(try errors(text).contains("manifest.yaml:29:5: unknown key 'titel' in an intent; expected one of identifier, title, description, category, summary, parameters, confirm, time-limit"))
        #expect(try errors(text).contains("manifest.yaml:28:5: an intent is missing the required key 'title'"))
    }

    @Test func identifiersMustBeWrittenAsInShortcutFiles() throws {
        #expect(try errors(manifest(identifier: "Kitchen.Lights")) == [
            "manifest.yaml:1:13: identifier 'Kitchen.Lights' must be letters, digits and underscores, starting with a letter (it is written App.Intent in shortcut files)",
        ])
    }

    @Test func theHandlerProgramMustExist() throws {
        #expect(try errors(manifest(handler: "[no-such-program-x, a.py]")) == [
            "manifest.yaml:4:11: the handler program 'no-such-program-x' is not on the PATH; write ./no-such-program-x for a program in the app folder",
        ])
        #expect(try errors(manifest(handler: "[./handler.sh]")) == ["manifest.yaml:4:11: the handler program './handler.sh' does not exist in the app folder"])
        #expect(try errors(manifest(handler: "[]")) == ["manifest.yaml:4:10: handler must name a program to run, e.g. [python3, handler.py]"])
        #expect(try errors(manifest(handler: "python3 handler.py")) == ["manifest.yaml:4:10: handler must be a list like [python3, handler.py], not 'python3 handler.py'"])
    }

    @Test func aHandlerThatIsNotExecutableIsNamed() throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        try folder.write("manifest.yaml", manifest(handler: "[./handler.sh]"))
        try folder.write("handler.sh", "#!/bin/sh\n")
        #expect(throws: ManifestErrors.self) { try ExternalApp.load(folder: folder.url, installed: [], logger: log.logger) }
        do {
            _ = try ExternalApp.load(folder: folder.url, installed: [], logger: log.logger)
        } catch {
            #expect(error.errors.map(\.reason) == ["the handler program './handler.sh' is not executable (chmod +x)"])
            #expect(error.errors.first?.file == folder.manifestPath)
        }
    }

    @Test func parameterTypesCategoriesAndValues() throws {
        let bad = manifest(extraIntents: """
          - identifier: Other
            title: Other
            category: bake
            parameters:
              - {name: a, type: colour}
              - {name: b, type: enum}
              - {name: c, type: text, values: [x]}
              - {name: d, type: entity, values: [x]}
              - {name: e, type: text, min: 3}
              - {name: f, type: integer, min: 5, max: 2}
              - {name: g, type: enum, values: [x, x], default: y}
              - {name: app, type: text}
              - {name: h, type: integer, default: many}
        """)
        #expect(try errors(bad) == [
            "manifest.yaml:30:15: intent 'Other' category 'bake' is not one of: order, payment, create, edit, delete, get, play, set, generic",
            "manifest.yaml:32:25: parameter 'a' of intent 'Other' type 'colour' is not one of: enum, entity, text, integer, decimal, boolean, duration, date, time",
            "manifest.yaml:33:9: parameter 'b' of intent 'Other' is an enum and needs values, e.g. values: [{value: kitchen, display: kitchen}]",
            "manifest.yaml:34:39: parameter 'c' of intent 'Other': values are only for enum parameters",
            "manifest.yaml:35:41: parameter 'd' of intent 'Other': values are only for enum parameters; an entity's values come from the handler's options method",
            "manifest.yaml:36:36: parameter 'e' of intent 'Other': min is only for integer, decimal and duration parameters",
            "manifest.yaml:37:47: parameter 'f' of intent 'Other': max 2 is below min 5",
            "manifest.yaml:38:43: parameter 'g' of intent 'Other' lists the value 'x' twice",
            "manifest.yaml:38:56: parameter 'g' of intent 'Other' default 'y' is not one of the values (x)",
            "manifest.yaml:39:16: parameter name 'app' must be letters, digits and underscores, and not 'app' ({app} names the app in phrases)",
            "manifest.yaml:40:43: parameter 'h' of intent 'Other' default 'many' is not a whole number",
        ])
    }

    @Test func intentsAndParametersDeclaredTwiceAndSummaries() throws {
        let bad = manifest(extraIntents: """
          - identifier: SetLight
            title: Again
          - identifier: Other
            title: Other
            summary: "Do {thing}"
            time-limit: 900
            parameters:
              - {name: a, type: text}
              - {name: a, type: text}
        """)
        #expect(try errors(bad) == [
            "manifest.yaml:28:5: the intent 'SetLight' is declared twice (first at line 7)",
            "manifest.yaml:32:14: intent 'Other' summary names {thing}, which is not a parameter of the intent",
            "manifest.yaml:33:17: intent 'Other' time-limit must be between 0.1 and 300 seconds, not 900.0",
            "manifest.yaml:36:9: intent 'Other' declares the parameter 'a' twice",
        ])
    }

    @Test func shortcutsMustUseDeclaredIntentsAndHavePhrases() throws {
        #expect(try errors(manifest(shortcuts: "  - intent: Nope\n    phrases: [\"nope {app}\"]\n  - intent: SetLight\n    phrases: []")) == [
            "manifest.yaml:30:13: the shortcut uses the intent 'Nope', which the manifest does not declare (declared: SetLight)",
            "manifest.yaml:33:14: a shortcut needs at least one phrase",
        ])
    }

    // MARK: The rules of Swift app registration

    @Test func aPhraseMustNameTheApp() throws {
        #expect(try errors(manifest(shortcuts: "  - intent: SetLight\n    phrases: [\"switch the {room} light\"]")) == [
            "manifest.yaml:31:15: phrase 'switch the {room} light': does not contain the app's name or a synonym (Kitchen Lights, the lights); write {app} or the name",
        ])
    }

    @Test func atMostOneFiniteParameterPerPhrase() throws {
        #expect(try errors(manifest(shortcuts: "  - intent: SetLight\n    phrases: [\"turn {state} the {room} light with {app}\", \"dim to {brightness} with {app}\", \"{colour} with {app}\"]")) == [
            "manifest.yaml:31:15: phrase 'turn {state} the {room} light with {app}': has 2 parameters ({state}, {room}); a phrase may contain at most one",
            "manifest.yaml:31:59: phrase 'dim to {brightness} with {app}': parameter 'brightness' is of the open type integer; a phrase parameter must come from a finite list (an enum or an entity's suggestions)",
            "manifest.yaml:31:93: phrase '{colour} with {app}': {colour} is not a parameter of the intent",
        ])
    }

    @Test func atMostTenShortcuts() throws {
        let eleven = (1...11).map { "  - intent: SetLight\n    phrases: [\"light \(SpokenNumber.words($0)) with {app}\"]" }.joined(separator: "\n")
        #expect(try errors(manifest(shortcuts: eleven)) == [
            "manifest.yaml:30:3: declares 11 App Shortcuts; at most 10 are allowed",
        ])
    }

    @Test func noClashWithInstalledApps() throws {
        // Soup Chef is built in: its identifier is taken.
        #expect(try errors(manifest(identifier: "SoupChef")) == ["manifest.yaml:1:13: another app has the identifier 'SoupChef'"])
        #expect(try errors(manifest(identifier: "SoupChef"), installed: []) == [])
        // With Kitchen Lights installed, a second app called "the lights" clashes by name and by phrase.
        let lights = try load(manifest()).get().description
        #expect(try errors(manifest(identifier: "Lamps", name: "Lamps"), installed: builtInApps + [lights]) == [
            "manifest.yaml:2:7: the name 'the lights' already names the app 'Kitchen Lights'",
            "manifest.yaml:31:15: phrase 'switch the {room} light with {app}': is the same as the phrase 'switch the {room} light with {app}' of app 'Kitchen Lights'",
            "manifest.yaml:31:53: phrase 'use {app}': is the same as the phrase 'use {app}' of app 'Kitchen Lights'",
        ])
    }

    @Test func aChildParameterNeedsAParentAndItsValues() throws {
        let text = manifest(extraIntents: """
          - identifier: Other
            title: Other
            parameters:
              - {name: mode, type: enum, values: [pickup, delivery]}
              - {name: address, type: text, parent: {parameter: mode, values: [post]}}
        """)
        #expect(try errors(text) == [
            "manifest.yaml:32:9: parameter 'address' depends on mode being 'post', which is not one of its values (pickup, delivery)",
        ])
        // A parent that is not a parameter at all: the registration rule, placed at the parameter.
        let orphan = manifest(extraIntents: """
          - identifier: Other
            title: Other
            parameters:
              - {name: note, type: text, parent: {parameter: nothing, values: [x]}}
        """)
        #expect(try errors(orphan) == [
            "manifest.yaml:31:9: intent 'Other': parameter 'note' depends on 'nothing', which is not a parameter of this intent",
        ])
    }

    @Test func aManifestThatIsNotThereOrNotText() throws {
        let folder = try AppFolder()
        defer { folder.remove() }
        do {
            _ = try ExternalApp.load(folder: folder.url, installed: [], logger: log.logger)
            Issue.record("loaded a folder without a manifest")
        } catch {
            #expect(error.description == "\(folder.manifestPath):1:1: no manifest.yaml in the app folder")
        }
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: folder.manifestPath))
        do {
            _ = try ExternalApp.load(folder: folder.url, installed: [], logger: log.logger)
        } catch {
            #expect(error.description == "\(folder.manifestPath):1:1: the manifest is not UTF-8 text")
        }
    }

    @Test func anchorsAndAliasesAreRefusedWithTheirPlace() throws {
        #expect(try errors("identifier: &id x\nname: *id\n")
            == ["manifest.yaml:1:13: an anchor (&id) is not accepted in an app manifest; write the value out in full"])
        #expect(try errors("identifier: x\nname: *id\n")
            == ["manifest.yaml:2:7: an alias (*id) is not accepted in an app manifest; write the value out in full"])
    }

    @Test func aManifestPastTheSizeLimitIsRefusedUnread() throws {
        let big = "identifier: x\n" + String(repeating: "#\n", count: 128 * 1024)
        #expect(try errors(big) == ["manifest.yaml:1:1: is 262158 bytes; an app manifest may have at most 262144"])
    }
}
