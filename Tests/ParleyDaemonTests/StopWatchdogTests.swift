import Logging
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
}
