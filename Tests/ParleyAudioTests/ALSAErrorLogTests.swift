import Logging
import ParleyTestKit
import Testing

@testable import ParleyAudio

/// libasound's own messages ("ALSA lib confmisc.c:…") reach the logger
/// through the C shim instead of standard error; real libasound, no card 9.
@Suite(.serialized) struct ALSAErrorLogTests {
    /// Opens hw:9,0 `times` times with libasound's messages routed to a
    /// recorder at `level`; returns what was recorded about card 9.
    func openMissingCard(times: Int, level: Logger.Level) throws -> [RecordingLogHandler.Entry] {
        let store = RecordingLogHandler.Store()
        ALSAErrorLog.route(to: Logger(label: "parley.alsa") { _ in
            var handler = RecordingLogHandler(store: store)
            handler.logLevel = level
            return handler
        })
        defer { ALSAErrorLog.restoreDefault() }
        let service = try CaptureService(
            configuration: CaptureConfiguration(device: PCMDevice(name: "hw:9,0"), realtimePriority: nil),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        for _ in 0..<times {
            #expect(throws: AudioError.self) { try service.start() }
        }
        // libasound explains the missing card in its configuration code.
        return store.all.filter { $0.message.contains("9") && $0.metadata["alsa-lib"]?.hasPrefix("confmisc.c:") == true }
    }

    @Test func eachMessageReachesTheLoggerOnceAtNotice() throws {
        let entries = try openMissingCard(times: 3, level: .debug)
        #expect(entries.count == 1, "\(entries)")
        #expect(entries.first?.level == .notice)
        #expect(entries.first?.metadata["alsa-lib"]?.contains("(") == true)   // file:line (function)
    }

    @Test func atTraceTheRepeatsAreLoggedToo() throws {
        let entries = try openMissingCard(times: 3, level: .trace)
        #expect(entries.count == 3, "\(entries)")
        #expect(entries.first?.level == .notice)
        #expect(entries.dropFirst().allSatisfy { $0.level == .trace && $0.message == entries.first?.message })
    }

    @Test func afterRestoringTheDefaultNothingMoreIsLogged() throws {
        let store = RecordingLogHandler.Store()
        ALSAErrorLog.route(to: Logger(label: "parley.alsa") { _ in RecordingLogHandler(store: store) })
        ALSAErrorLog.restoreDefault()
        let service = try CaptureService(
            configuration: CaptureConfiguration(device: PCMDevice(name: "hw:9,0"), realtimePriority: nil),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(throws: AudioError.self) { try service.start() }
        #expect(store.all.isEmpty)
    }
}
