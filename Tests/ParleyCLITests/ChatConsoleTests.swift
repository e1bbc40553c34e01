import Foundation
import ParleyTestKit
import Testing

/// `parley chat` through the real executable: the console contract and the
/// conversations of docs/spec.md §1 (items 2, 3, 4, 5, 7, 8).
@Suite struct ChatConsoleTests {
    struct Outcome {
        var status: Int32
        var stdout: [String]
        var stderr: String
    }

    /// The `parley` binary in the build products folder beside this test bundle.
    static func executable() throws -> URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [bundle.deletingLastPathComponent().appendingPathComponent("parley")]
        for parent in sequence(first: bundle, next: { $0.path == "/" ? nil : $0.deletingLastPathComponent() })
        where parent.pathExtension == "xctest" {
            candidates.append(parent.deletingLastPathComponent().appendingPathComponent("parley"))
        }
        candidates.append(Fixtures.packageRoot.appendingPathComponent(".build/debug/parley"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CLIError("the parley executable was not found (looked at \(candidates.map(\.path).joined(separator: ", "))); build it with `swift build --product parley`")
        }
        return found
    }

    struct CLIError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func chat(_ lines: [String], arguments: [String] = []) async throws -> Outcome {
        let exit = try await ChildProcess.run(
            try Self.executable().path, ["chat"] + arguments, input: lines.joined(separator: "\n") + "\n")
        let stdout = exit.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return Outcome(status: exit.status, stdout: stdout.last == "" ? Array(stdout.dropLast()) : stdout,
                       stderr: exit.standardError)
    }

    func device(_ outcome: Outcome) -> [String] { outcome.stdout.filter { $0.hasPrefix("device: ") } }
    func performed(_ outcome: Outcome) -> [String] { outcome.stdout.filter { $0.hasPrefix("performed: ") } }

    @Test func item2AMissingSizeIsAskedThenTheButtonOrders() async throws {
        let outcome = try await chat(["Hey, order a latte with Barista.", "Large.", ":press"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == [
            "led: listening", "led: thinking", "led: speaking",
            "device: Which size? Small, medium or large?",
            "led: listening", "led: thinking", "led: speaking",
            "device: A large latte from the corner café, four dollars twenty five. Press the button to order, or say cancel.",
            "led: awaiting-confirmation", "led: thinking",
            #"performed: CoffeeMaker.orderDrink {"coffeeDrink":"latte","size":"large"}"#,
            "led: speaking",
            "device: Ordered. It will be ready in eleven minutes. Your large latte, four dollars twenty five.",
            "led: success", "led: idle",
        ])
        #expect(outcome.stderr.contains("resolved"))
    }

    /// The volume (issue 28): one word at the new level, the buttons tick,
    /// mute says nothing; the console's level lasts the session.
    @Test func theVolumeAnswersWithOneWord() async throws {
        let outcome = try await chat(["louder", ":volume-down", ":volume-down", "what's the volume", "mute", "volume nine"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(device(outcome) == ["device: seven", "device: five", "device: nine"])
        #expect(outcome.stderr.components(separatedBy: "sound: volume").count - 1 == 2)
    }

    @Test func item3TheWholeOrderFromOneSentence() async throws {
        let outcome = try await chat(["Hey, can I get a twelve ounce dark roast double shot americano with a bit of cream", ":press"])
        #expect(outcome.status == 0)
        #expect(performed(outcome) == [#"performed: CoffeeMaker.orderDrink {"coffeeDrink":"americano","milkAmount":"a bit of cream","numberOfShots":"double shot","roast":"dark roast","size":"twelve ounce"}"#])
    }

    @Test func item4SoupWithOrdinalAndStore() async throws {
        let outcome = try await chat(["Hey computer, order soup with Soup Chef.", "The first one.", "one", "Lewis.", ":press"])
        #expect(outcome.status == 0)
        #expect(device(outcome) == [
            "device: Which soup? Clam chowder, tomato or chicken noodle?",
            "device: How many soups do you want?",
            "device: There are two stores near you. Which one: Sheridan Boulevard or Lewis Avenue?",
            "device: One clam chowder for pickup from Lewis Avenue, three dollars seventy five. Press the button to order, or say cancel.",
            "device: Ordered. Your clam chowder will be ready at Lewis Avenue in ten minutes, total three dollars seventy five.",
            "device: Next time, just say: order clam chowder with Soup Chef.",
        ])
        #expect(performed(outcome) == [#"performed: SoupChef.OrderSoup {"orderType":"pickup","quantity":"1","soup":"clamChowder","store":"lewis"}"#])
    }

    @Test func item5ATimerEndsAfterTheClockMoves() async throws {
        let outcome = try await chat(["Hey, start a ten minute timer.", ":wait 599", "how much time is left on the timer", ":wait 1"])
        #expect(outcome.status == 0)
        #expect(device(outcome) == ["device: Ten minutes, starting now.", "device: One second left. The ten minute timer ends then.",
                                    "device: The ten minute timer is done."])
        #expect(outcome.stderr.contains("sound: chime"))
    }

    @Test func item7WhatCanISay() async throws {
        let outcome = try await chat(["start a ten minute timer", "Hey, what can I say?"])
        #expect(device(outcome).last == "device: You can say: start a one minute timer, order a latte, order soup with Soup Chef, how much time is left on the timer or cancel the timer.")
    }

    @Test func item8CancelAndALongPressStopEverything() async throws {
        let outcome = try await chat(["order soup with soup chef", "tomato", "cancel", "order a latte with barista", ":long-press", ":press", "give me a large latte", "never mind", ":press"])
        #expect(outcome.status == 0)
        #expect(device(outcome).filter { $0 == "device: Cancelled." }.count == 3)
        #expect(performed(outcome).isEmpty)
        #expect(outcome.stdout.last == "led: listening") // the last press opens a listening window
    }

    @Test func stateGivenWithStatePersistsAcrossSessions() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-chat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try await chat(["add a note with notes", "buy oat milk"], arguments: ["--state", folder.path])
        #expect(first.status == 0)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("state.db").path))
        let second = try await chat(["read my notes with notes"], arguments: ["--state", folder.path])
        #expect(device(second) == ["device: There is one note. The latest: buy oat milk."])
        let ephemeral = try await chat(["read my notes with notes"])
        #expect(device(ephemeral) == ["device: There are no notes."])
    }

    @Test func standardOutputCarriesOnlyTheContractLines() async throws {
        let outcome = try await chat(["the television is loud tonight", ":wait 5", ":double-press", ":bogus", ":wait x", "order soup with soup chef", ":quit", "tomato"])
        #expect(outcome.status == 0)
        for line in outcome.stdout {
            #expect(line.hasPrefix("device: ") || line.hasPrefix("led: ") || line.hasPrefix("performed: "), "\(line)")
        }
        #expect(device(outcome) == ["device: Which soup? Clam chowder, tomato or chicken noodle?"]) // nothing after :quit
        #expect(outcome.stderr.contains("not understood: the television is loud tonight"))
        #expect(outcome.stderr.contains("unknown command ':bogus'"))
        #expect(outcome.stderr.contains("':wait' needs a number of seconds"))
    }

    @Test func ledLinesShowWhatTheBoardShowsWhileMuted() async throws {
        // The mute switch overrides every state but a flash, as on the board.
        let outcome = try await chat(["give me a large latte", ":mute", ":press", ":unmute"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.filter { $0.hasPrefix("led: ") } == [
            "led: listening", "led: thinking", "led: speaking", "led: awaiting-confirmation",
            "led: muted",  // at :mute, although the engine still awaits the press
            "led: success", "led: muted",  // thinking and speaking do not show through
            "led: idle",
        ])
        #expect(performed(outcome).count == 1)
    }

    @Test func optionsAreValidatedWithClearErrors() async throws {
        let order = try await chat([], arguments: ["--voice-confirm", "order"])
        #expect(order.status != 0)
        #expect(order.stderr.contains("'order' is confirmed with the button only"))
        let unknown = try await chat([], arguments: ["--voice-confirm", "dance"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown category 'dance'"))
        let primary = try await chat([], arguments: ["--primary-app", "Toaster"])
        #expect(primary.status != 0)
        #expect(primary.stderr.contains("Toaster"))
    }

    @Test func voiceConfirmationAndThePrimaryAppAreConfigurable() async throws {
        let spoken = try await chat(["add a note with notes", "water the plants", "delete a note from notes", "the first one", "yes"],
                              arguments: ["--voice-confirm", "none"])
        #expect(device(spoken).last == "device: A spoken yes can't confirm this. Press the button to delete it, or say cancel.")
        let noPrimary = try await chat(["order a latte", "order a latte with barista"], arguments: ["--primary-app", "none"])
        #expect(device(noPrimary) == ["device: Which size? Small, medium or large?"])
    }
}
