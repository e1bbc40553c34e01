import Logging
import ParleyTestKit
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyDaemon

@Suite("Stop watchdog: a slow stop ends the process, never crashes")
struct StopWatchdogTests {
    final class Exits: Sendable {
        let codes = Mutex<[Int32]>([])
        var exit: @Sendable (Int32) -> Void { { code in self.codes.withLock { $0.append(code) } } }
    }

    @Test func aStopThatOutlastsTheLimitExitsWithStatusZero() {
        let exits = Exits()
        let watchdog = StopWatchdog(limit: .milliseconds(1), logger: Logger(label: "test"), exit: exits.exit)
        watchdog.arm()
        watchdog.waitUntilEnded()
        #expect(exits.codes.withLock { $0 } == [0])
    }

    @Test func aStopThatFinishesDisarmsIt() {
        let exits = Exits()
        let watchdog = StopWatchdog(limit: .seconds(600), logger: Logger(label: "test"), exit: exits.exit)
        watchdog.arm()
        watchdog.arm()  // a second arm starts nothing more
        watchdog.disarm()
        watchdog.waitUntilEnded()
        #expect(exits.codes.withLock { $0 }.isEmpty)
    }

    @Test func theWatchdogNamesWhatStillRuns() {
        let exits = Exits()
        let ring = LogRing(capacity: 10)
        let logger = Logger(label: "t") { JournalLogHandler(label: $0, level: .info, ring: ring, journal: false) }
        let watchdog = StopWatchdog(
            limit: .milliseconds(1), logger: logger, stillRunning: { ["ListeningPipeline", "StoreCloser"] }, exit: exits.exit)
        watchdog.arm()
        watchdog.waitUntilEnded()
        #expect(exits.codes.withLock { $0 } == [0])
        #expect(ring.recent(10).count == 1)
        #expect(ring.recent(1).first?.contains("still-running=ListeningPipeline,StoreCloser") == true)
    }
}

@Suite("Service trace: what holds a stop is named")
struct ServiceTraceTests {
    struct Quick: Service {
        func run() async throws {}
    }

    struct Held: Service {
        let gate: Gate
        func run() async throws { await gate.wait() }
    }

    struct Failing: Service {
        struct Broken: Error {}
        func run() async throws { throw Broken() }
    }

    @Test func servicesAreKnownByTypeUntilTheyEndAndEndsDuringAStopAreLogged() async throws {
        let ring = LogRing(capacity: 10)
        var logger = Logger(label: "t") { JournalLogHandler(label: $0, level: .info, ring: ring, journal: false) }
        logger.logLevel = .info
        let trace = ServiceTrace(logger: logger)
        let gate = Gate()
        // Ended before any stop: not logged at info (a failure is ServiceGroup's to log).
        try await trace.traced(Quick()).run()
        await #expect(throws: Failing.Broken.self) { try await trace.traced(Failing()).run() }
        #expect(ring.recent(10).isEmpty)
        #expect(trace.millisecondsSinceStop == nil)

        let held = trace.traced(Held(gate: gate))
        let second = trace.traced(Held(gate: gate))
        let first = Task { try await held.run() }
        await gate.waitForArrivals(1)
        let other = Task { try await second.run() }
        await gate.waitForArrivals(2)
        #expect(trace.stillRunning == ["Held", "Held"])
        trace.stopBegins()
        gate.openFirst()
        try await first.value
        #expect(trace.stillRunning == ["Held"])
        gate.openFirst()
        try await other.value
        #expect(trace.stillRunning.isEmpty)
        let lines = ring.recent(10)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains("service ended") && $0.contains("service=Held") && $0.contains("ms-since-stop=") })
        #expect(lines.first?.contains("still-running=Held") == true)
        #expect(trace.millisecondsSinceStop != nil)
    }
}
