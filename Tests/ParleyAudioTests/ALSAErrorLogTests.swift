import Logging
import ParleyTestKit
import Testing

@testable import ParleyAudio

/// libasound's own messages ("ALSA lib confmisc.c:…") reach the logger
/// through the C shim instead of standard error; real libasound, no card 9.
@Suite(.serialized) struct ALSAErrorLogTests {
    @Test func libasoundsMessagesGoToTheLoggerOnceAtNoticeThenAtDebug() throws {
        let store = RecordingLogHandler.Store()
        ALSAErrorLog.route(to: Logger(label: "parley.alsa") { _ in RecordingLogHandler(store: store) })
        defer { ALSAErrorLog.restoreDefault() }
        let service = try CaptureService(
            configuration: CaptureConfiguration(device: PCMDevice(name: "hw:9,0"), realtimePriority: nil),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        for _ in 0..<3 {
            #expect(throws: AudioError.self) { try service.start() }
        }
        // libasound explains the missing card in its configuration code.
        let aboutCard9 = store.all.filter { $0.message.contains("9") && $0.metadata["alsa-lib"]?.hasPrefix("confmisc.c:") == true }
        #expect(!aboutCard9.isEmpty, "\(store.all)")
        guard let first = aboutCard9.first else { return }
        #expect(first.level == .notice)
        #expect(first.metadata["alsa-lib"]?.contains("(") == true)   // file:line (function)
        // The same message again (every reopen attempt) is debug only.
        let repeats = aboutCard9.filter { $0.message == first.message && $0.metadata["alsa-lib"] == first.metadata["alsa-lib"] }
        #expect(repeats.count == 3)
        #expect(repeats.dropFirst().allSatisfy { $0.level == .debug })
    }

    @Test func aMessageRepeatedEveryPeriodIsLoggedOnlyAtPowersOfTwo() throws {
        let store = RecordingLogHandler.Store()
        ALSAErrorLog.route(to: Logger(label: "parley.alsa") { _ in RecordingLogHandler(store: store) })
        defer { ALSAErrorLog.restoreDefault() }
        for _ in 0..<1_000 {
            ALSAErrorLog.log(file: "pcm.c", line: 3349, function: "snd_pcm_areas_copy", errno: 0, message: "invalid frames 0")
        }
        // The first at notice, then repeats 1, 2, 4, … 512: 11 lines for 1,000 messages.
        #expect(store.all.count == 11)
        #expect(store.all.first?.level == .notice)
        #expect(store.all.last?.metadata["repeated"] == "512")
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
