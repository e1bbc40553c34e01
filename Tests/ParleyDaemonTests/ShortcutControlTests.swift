import Foundation
import Logging
import ParleyControl
import ParleyCore
import Testing

@testable import ParleyDaemon

/// `parley shortcuts list|show|run|add|remove` over the real control socket,
/// answered by the components parleyd wires (engine, shortcut folder).
@Suite struct ShortcutControlTests {
    @Test func addListShowRunSayAndRemoveAShortcut() async throws {
        let server = try await RunningServer.wired()
        defer { server.stop() }
        let file = server.dir.file("tea.yaml")
        try "name: Tea\nphrases: [tea time]\ntriggers: [{button: double-press}]\nactions:\n  - speak: Kettle on.\n  - run: Timer.StartTimer\n    with: { duration: 240 }\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let added = try await server.send(.addShortcut(file))
        #expect(added.message == "Added the shortcut \"Tea\".")
        let listed = try #require(try await server.send(.personalShortcuts).personalShortcuts)
        #expect(listed.map(\.name) == ["Tea"])
        #expect(listed.first?.triggers == ["button double-press"])
        #expect(listed.first?.summary == "Say \"Kettle on.\", then start a four minutes timer.")
        #expect(try await server.send(.showShortcut("tea")).personalShortcuts?.first?.file.hasSuffix("/shortcuts/tea.yaml") == true)
        let ran = try await server.send(.runShortcut("Tea"))
        #expect(ran.spoken == ["Kettle on.", "Four minutes, starting now."])
        // Its phrase is in the grammar.
        #expect(try await server.send(.say("tea time")).spoken == ["Kettle on.", "Four minutes, starting now."])
        // `parley phrases add "kettle please" --shortcut Tea`: another phrase, listed with the custom phrases.
        _ = try await server.send(.addPhrase(phrase: "kettle please", app: "shortcut", intent: "tea", parameters: [:]))
        #expect(try await server.send(.phrases).phrases?.map { "\($0.phrase) → \($0.app) / \($0.intent)" } == ["kettle please → shortcut / Tea"])
        #expect(try await server.send(.say("kettle please")).spoken == ["Kettle on.", "Four minutes, starting now."])
        await #expect(throws: ControlClientError.refused("There is no shortcut 'Nope'; loaded: Tea.")) {
            _ = try await server.send(.addPhrase(phrase: "nope please", app: "shortcut", intent: "Nope", parameters: [:]))
        }
        #expect(try await server.send(.removeShortcut("Tea")).message == "Removed the shortcut \"Tea\".")
        #expect(try await server.send(.personalShortcuts).personalShortcuts == [])
    }

    @Test func aBadFileIsRefusedWithItsProblemsAndUnknownNamesAreNamed() async throws {
        let server = try await RunningServer.wired()
        defer { server.stop() }
        let file = server.dir.file("bad.yaml")
        try "name: Bad\nactions:\n  - run: SoupChef.OrderSoup\n    with: { soup: pea }\n".write(toFile: file, atomically: true, encoding: .utf8)
        await #expect(throws: ControlClientError.refused("\(file):4:19: 'pea' is not a value of soup; expected one of clamChowder, tomato, chickenNoodle")) {
            _ = try await server.send(.addShortcut(file))
        }
        await #expect(throws: ControlClientError.refused("no shortcut named \"Nope\"")) { _ = try await server.send(.removeShortcut("Nope")) }
        await #expect(throws: ControlClientError.self) { _ = try await server.send(.runShortcut("Nope")) }
    }
    /// `parley shortcuts disable`: listed as off, its phrase no longer
    /// understood; enabled again, understood. Kept in the state store, so a
    /// folder loaded again later (as at a restart) leaves it off.
    @Test func aShortcutTurnedOffIsListedOffAndNotUnderstoodUntilTurnedOn() async throws {
        let server = try await RunningServer.wired()
        defer { server.stop() }
        let file = server.dir.file("tea.yaml")
        try "name: Tea\nphrases: [tea time]\nactions:\n  - speak: Kettle on.\n".write(toFile: file, atomically: true, encoding: .utf8)
        _ = try await server.send(.addShortcut(file))
        let off = try await server.send(.setShortcutEnabled(name: "tea", enabled: false))
        #expect(off.message == "Turned off the shortcut \"tea\": its phrases are no longer understood.")
        #expect(try await server.send(.personalShortcuts).personalShortcuts?.map(\.enabled) == [false])
        #expect(try await server.send(.resolve("tea time")).resolution?.matched == false)
        #expect(try await server.send(.say("tea time")).spoken != ["Kettle on."])
        // Stored: a second folder over the same state (a restart's) loads it off.
        let stored = try await server.store.value(app: SwitchedOff.owner, key: "shortcuts-off")
        #expect(stored.map { String(decoding: $0, as: UTF8.self) } == "[\"tea\"]")
        let restarted = SwitchedOff(store: server.store, key: "shortcuts-off")
        #expect(await restarted.restore() == nil)
        let folder = ShortcutFolder(directory: server.dir.file("state/shortcuts"), logger: Logger(label: "test"), off: restarted,
                                    environment: { ShortcutFolderTests.environment }, apply: { _ in })
        await folder.load()
        #expect(folder.loaded.shortcuts.map(\.name) == ["Tea"] && folder.library.shortcuts.isEmpty)

        #expect(try await server.send(.setShortcutEnabled(name: "Tea", enabled: true)).message == "Turned on the shortcut \"Tea\".")
        #expect(try await server.send(.personalShortcuts).personalShortcuts?.map(\.enabled) == [true])
        #expect(try await server.send(.say("tea time")).spoken == ["Kettle on."])
        await #expect(throws: ControlClientError.refused("no shortcut named \"Nope\" (see `parley shortcuts list`)")) {
            _ = try await server.send(.setShortcutEnabled(name: "Nope", enabled: false))
        }
    }
}
