import Glibc
import Logging
import ParleyTestKit
import Testing
@testable import ParleyAudio

/// The ALSA wrapper through a scripted function table: errors, recovery and
/// reconnection, checked on the recorded call trace. No device needed.
@Suite struct CallTraceTests {
    let device = PCMDevice(name: "hw:7,0")

    func makeService(_ mock: MockALSA) throws -> CaptureService {
        try CaptureService(
            configuration: CaptureConfiguration(device: device, realtimePriority: nil, reconnectInitialMilliseconds: 1,
                                                reconnectMaximumMilliseconds: 4),
            logger: Logger(label: "test"), alsa: mock.functions)
    }

    @Test func busyDeviceIsAClearError() throws {
        let mock = MockALSA(.init(open: [-EBUSY]))
        let service = try makeService(mock)
        #expect(throws: AudioError.deviceBusy(device: "hw:7,0")) { try service.start() }
        #expect(mock.calls == ["snd_pcm_open"])
        #expect(AudioError.deviceBusy(device: "hw:7,0").description.contains("busy"))
    }

    @Test func unknownDeviceNamesTheDevice() throws {
        let mock = MockALSA(.init(open: [-ENOENT]))
        let service = try makeService(mock)
        do {
            try service.start()
            Issue.record("start succeeded")
        } catch {
            guard case .deviceNotFound(let name, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(name == "hw:7,0")
            #expect(error.description.contains("'hw:7,0' not found"))
        }
    }

    @Test func unsupportedFormatClosesTheHandleOnce() throws {
        let mock = MockALSA(.init(setFormat: -EINVAL))
        let service = try makeService(mock)
        do {
            try service.start()
            Issue.record("start succeeded")
        } catch {
            guard case .unsupportedFormat(let name, let requested, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(name == "hw:7,0")
            #expect(requested.contains("S16_LE 1 ch 16000 Hz"))
        }
        #expect(mock.calls == [
            "snd_pcm_open", "snd_pcm_hw_params_malloc", "snd_pcm_hw_params_any", "snd_pcm_hw_params_set_access",
            "snd_pcm_hw_params_set_format", "snd_pcm_hw_params_free", "snd_pcm_close",
        ])
    }

    @Test func overrunsAreRecoveredInTheLoopAndCounted() throws {
        let mock = MockALSA(.init(readi: [160, -Int(EPIPE), 160, -Int(EPIPE), -Int(EPIPE), 160]))
        let service = try makeService(mock)
        try service.start()
        #expect(Poll.holdsBlocking("ten capture periods read") { service.status.periods >= 10 })
        service.stop()
        #expect(service.status.overruns == 3)
        #expect(service.status.snapshot.description.contains("3 overruns"))
        #expect(mock.count("snd_pcm_recover(-32)") == 3)
        #expect(service.status.lastErrno == 0)
        // Each recovery directly follows the failed read.
        let calls = mock.calls
        for (i, call) in calls.enumerated() where call.hasPrefix("snd_pcm_recover") {
            #expect(calls[i - 1] == "snd_pcm_readi")
        }
        #expect(service.ring.writePosition >= 160 * 10)
    }

    @Test func interruptedReadsAreRetriedSilently() throws {
        let mock = MockALSA(.init(readi: [-Int(EINTR), -Int(EINTR), 160]))
        let service = try makeService(mock)
        try service.start()
        #expect(Poll.holdsBlocking("three capture periods read") { service.status.periods >= 3 })
        service.stop()
        #expect(Array(mock.calls.filter { $0 == "snd_pcm_readi" || $0.hasPrefix("snd_pcm_recover") }.prefix(3))
                == ["snd_pcm_readi", "snd_pcm_readi", "snd_pcm_readi"])
        #expect(service.status.overruns == 0)
        #expect(service.status.reconnects == 0)
        #expect(service.status.lastErrno == 0)
    }

    @Test func vanishedDeviceIsReopenedWithBackOff() throws {
        // start() opens fine; then the device vanishes and is away for two attempts.
        let mock = MockALSA(.init(open: [0, -ENODEV, -ENOENT], readi: [160, -Int(ENODEV)]))
        let service = try makeService(mock)
        mock.stateProbe.withLock { $0 = { [weak service] in service?.status.state.description ?? "gone" } }
        try service.start()
        #expect(Poll.holdsBlocking("reconnected once and reading again") { service.status.reconnects == 1 && service.status.periods >= 5 })
        service.stop()
        #expect(service.status.state == .stopped)
        #expect(service.status.lastErrno == ENOENT)   // the last failure seen while reconnecting
        let opens = mock.calls.filter { $0.hasPrefix("snd_pcm_open") }
        // The first open is start(); then three attempts while reconnecting.
        #expect(opens == ["snd_pcm_open(stopped)", "snd_pcm_open(reconnecting)", "snd_pcm_open(reconnecting)", "snd_pcm_open(reconnecting)"])
        // The vanished handle was closed before reopening.
        let calls = mock.calls
        let firstReopen = calls.firstIndex(of: "snd_pcm_open(reconnecting)")!
        #expect(calls[..<firstReopen].contains("snd_pcm_close"))
        #expect(mock.count("snd_pcm_close") == 2)           // the vanished one and, at stop, the reopened one
    }

    @Test func aMissingDeviceAtStartIsReopenedInTheBackground() throws {
        // Not there for start() and the first retry; plugged in for the second.
        let mock = MockALSA(.init(open: [-ENOENT, -ENOENT, 0], readi: [160]))
        let service = try makeService(mock)
        mock.stateProbe.withLock { $0 = { [weak service] in service?.status.state.description ?? "gone" } }
        let problem = service.startOrKeepTrying()
        guard case .deviceNotFound(let name, _) = problem else { Issue.record("wrong result \(String(describing: problem))"); return }
        #expect(name == "hw:7,0")
        #expect(Poll.holdsBlocking("reconnected once and reading again") { service.status.reconnects == 1 && service.status.periods >= 3 })
        #expect(service.status.state == .running)
        #expect(service.problem == nil)
        service.stop()
        let opens = mock.calls.filter { $0.hasPrefix("snd_pcm_open") }
        #expect(opens == ["snd_pcm_open(stopped)", "snd_pcm_open(reconnecting)", "snd_pcm_open(reconnecting)"])
        #expect(mock.count("snd_pcm_close") == 1)   // only the handle that was opened
    }

    @Test func aBusyDeviceAtStartIsReportedWhileRetrying() throws {
        let mock = MockALSA(.init(open: Array(repeating: -EBUSY, count: 1_000), sleepInBackOff: true))
        let service = try makeService(mock)
        #expect(service.startOrKeepTrying() == .deviceBusy(device: "hw:7,0"))
        #expect(Poll.holdsBlocking("the missing device tried three times") { mock.count("snd_pcm_open") >= 3 })   // retried, with back-off, until stopped
        #expect(service.status.state == .reconnecting)
        #expect(service.status.lastErrno == EBUSY)
        #expect(service.problem?.contains("busy") == true)
        service.stop()
        #expect(service.status.state == .stopped)
        #expect(service.problem == nil)
    }

    @Test(.timeLimit(.minutes(3))) func stopWakesABlockedRead() throws {
        let mock = MockALSA(.init(blockForever: true))
        let service = try makeService(mock)
        try service.start()
        #expect(Poll.holdsBlocking("the thread waiting in poll()") { mock.count("poll") >= 1 })
        service.stop()                  // would hang forever if the eventfd did not wake poll(2)
        #expect(service.status.state == .stopped)
        #expect(mock.count("snd_pcm_close") == 1)
    }

    @Test func playbackReopensAVanishedSpeaker() throws {
        let mock = MockALSA(.init(writei: [-Int(ENODEV)]))
        let service = try PlaybackService(
            configuration: PlaybackConfiguration(device: PCMDevice(name: "hw:5,0")),
            logger: Logger(label: "test"), alsa: mock.functions)
        try service.start()
        service.enqueue([Int16](repeating: 1_000, count: 4_800), sampleRate: 48_000)   // ten periods
        service.waitUntilIdle()
        service.shutdown()
        #expect(service.reopenCount == 1)
        #expect(service.lastDeviceErrno == ENODEV)
        #expect(service.framesWritten == 4_800)          // the failed period was written again after reopening
        let calls = mock.calls.filter { ["snd_pcm_open", "snd_pcm_close", "snd_pcm_writei"].contains($0) }
        #expect(Array(calls.prefix(5)) == ["snd_pcm_open", "snd_pcm_writei", "snd_pcm_close", "snd_pcm_open", "snd_pcm_writei"])
        #expect(mock.count("snd_pcm_writei") == 11)
    }
}
