import Logging
import Testing

@testable import ParleyDaemon

@Suite struct LoggingTests {
    @Test func linesAreOneLineWithLevelLabelAndSortedMetadata() {
        let line = JournalLogHandler.format(
            level: .warning, label: "parleyd", message: "audio overrun\nrecovered",
            metadata: ["pcm": "hw:1", "count": "3"])
        #expect(line == "WARNING parleyd: audio overrun\\nrecovered count=3 pcm=hw:1")
    }

    @Test func journalPrioritiesFollowSyslog() {
        #expect(Logger.Level.allCases.map(JournalLogHandler.priority) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func handlerFeedsTheRingForParleyLogs() {
        let ring = LogRing(capacity: 3)
        var logger = Logger(label: "t") { JournalLogHandler(label: $0, level: .info, ring: ring, journal: false) }
        logger.logLevel = .info
        logger.debug("hidden")
        for n in 1...4 { logger.info("line \(n)") }
        #expect(ring.recent(10) == ["INFO t: line 2", "INFO t: line 3", "INFO t: line 4"])
        #expect(ring.recent(1) == ["INFO t: line 4"])
    }

    @Test func aLongLineIsCutAtTheByteLimitOnACharacterBoundary() {
        let ring = LogRing(capacity: 2, maximumLineBytes: 10)
        ring.append("exactly 10")
        ring.append("ééééééé")          // 14 bytes: 3 characters (6 bytes) and "…" (3)
        #expect(ring.recent(2) == ["exactly 10", "ééé…"])
        #expect(ring.recent(2).allSatisfy { $0.utf8.count <= 10 })
        #expect(LogRing().maximumLineBytes == 2048)
    }
}
