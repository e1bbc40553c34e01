import Foundation
import ParleyControl
import ParleyStore
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyDaemon

/// Issue 6's durability requirement on the real daemon, not a test writer:
/// `phrases add` requests (what `parley phrases add` sends) stream through the
/// control socket while parleyd is SIGKILLed at random moments and restarted;
/// afterwards every write the daemon acknowledged is there and the database
/// passes SQLite's integrity check.
@Suite(.serialized) struct DaemonDurabilityTests {
    /// SplitMix64: a seeded generator, so a failing run can be repeated.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let seed: UInt64 = 0x5EED_0006

    /// Acknowledged writes so far, shared by the writer and the killer.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// "stress phrase one two": a phrase per write number, in words (as
    /// phrases are spoken), all distinct and none a prefix of a command.
    static func phrase(_ n: Int) -> String {
        let digits = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
        return "stress phrase " + String(n).map { digits[Int(String($0))!] }.joined(separator: " ")
    }

    static func startDaemon(_ dir: TemporaryDirectory) async throws -> ChildProcess {
        try await Executables.start("parleyd", ["--config", dir.file("parley.yaml")])
    }

    /// Waits (by attempts) until the daemon answers on its socket.
    static func waitUntilReady(_ socket: String) async throws -> Bool {
        try await offPool {
            (try? Poll.untilBlocking("parleyd answers on \(socket)", polls: 400, every: .milliseconds(25)) {
                (try? ControlClient(path: socket).send(.status)) != nil
            }) != nil
        }
    }

    /// Sends `phrases add` for `first`, `first + 1`, … until the daemon stops
    /// answering; returns the numbers it acknowledged. `acked` counts them
    /// for the killer.
    static func writeUntilKilled(_ socket: String, from first: Int, acked: Counter) -> [Int] {
        var done: [Int] = []
        guard let client = try? ControlClient(path: socket) else { return done }
        var n = first
        while true {
            do {
                _ = try client.send(.addPhrase(phrase: phrase(n), app: "SoupChef", intent: "OrderSoup",
                                                parameters: ["soup": "tomato"]))
            } catch {
                return done  // the daemon is gone: this write was not acknowledged
            }
            done.append(n)
            acked.value.add(1, ordering: .releasing)
            n += 1
        }
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILLOfTheDaemon() async throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let socket = dir.file("parley.sock")
        // No audio in (the file does not exist), so a restart is quick.
        try """
            state_directory: \(dir.file("state"))
            control_socket: \(socket)
            audio: {capture: "file:none.wav"}
            log_level: notice
            """.write(toFile: dir.file("parley.yaml"), atomically: true, encoding: .utf8)
        var random = SeededGenerator(state: Self.seed)
        var acknowledged: [Int] = []
        var next = 0
        for round in 0..<6 {
            let process = try await Self.startDaemon(dir)
            #expect(try await Self.waitUntilReady(socket), "round \(round): parleyd did not start")
            let killAfter = Int.random(in: 1...12, using: &random)
            let delay = UInt32.random(in: 0...20_000, using: &random)  // µs: lands anywhere in a write
            let counter = Counter()
            let start = next
            let writer = Task { try await offPool { Self.writeUntilKilled(socket, from: start, acked: counter) } }
            try await offPool {
                // Bounded by attempts: a writer that stalls fails the expectation below.
                _ = try? Poll.untilBlocking("round \(round): \(killAfter) writes acknowledged") {
                    counter.value.load(ordering: .acquiring) >= killAfter
                }
                usleep(delay)  // not a wait for anything: lands the kill anywhere in the next write
                process.kill()
            }
            let exit = try await process.wait()
            let acked = try await writer.value
            #expect(exit.signal == SIGKILL, "round \(round): parleyd ended by itself: \(exit)")
            #expect(acked.count >= killAfter, "round \(round), seed \(Self.seed): \(acked.count) writes acknowledged")
            acknowledged += acked
            // The write in flight at the kill may have landed: never reuse its number.
            next = (acked.last ?? start) + 2
        }

        // Restarted once more: every acknowledged phrase is there.
        let process = try await Self.startDaemon(dir)
        #expect(try await Self.waitUntilReady(socket))
        let stored = try await offPool { try ControlClient(path: socket).send(.phrases).phrases ?? [] }
        let phrases = Set(stored.map(\.phrase))
        let lost = acknowledged.filter { !phrases.contains(Self.phrase($0)) }
        #expect(lost.isEmpty, "seed \(Self.seed): acknowledged writes lost: \(lost)")
        #expect(acknowledged.count >= 4)
        let exit = try await process.stop()
        #expect(exit.code == 0, "\(exit)")

        let store = try StateStore(path: dir.file("state/state.db"))
        #expect(try await store.integrityCheck() == ["ok"])
        #expect(Set(try await store.customPhrases().map(\.phrase)).isSuperset(of: acknowledged.map(Self.phrase)))
    }
}
