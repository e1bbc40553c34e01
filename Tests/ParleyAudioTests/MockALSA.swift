import CALSA
import Glibc
import Synchronization
@testable import ParleyAudio

/// A scripted libasound for call-trace tests: records every call by its C
/// name and returns injected failures in order; needs no sound card.
final class MockALSA: Sendable {
    struct Script {
        /// Results of successive snd_pcm_open calls (negative errno); success when empty.
        var open: [Int32] = []
        /// Results of successive snd_pcm_readi calls (negative errno, or a frame count); a full period when empty.
        var readi: [Int] = []
        /// Results of successive snd_pcm_writei calls (negative errno); all frames when empty.
        var writei: [Int] = []
        /// Result of snd_pcm_hw_params_set_format.
        var setFormat: Int32 = 0
        /// When true, readi returns -EAGAIN forever and poll really blocks on the wake eventfd.
        var blockForever = false
        /// When true, a poll of the wake eventfd alone (the capture loop's
        /// back-off) really waits for its timeout, so a device that keeps
        /// failing is retried at the loop's pace, not in a tight spin.
        var sleepInBackOff = false
    }

    let trace = Mutex<[String]>([])
    let script: Mutex<Script>
    /// What `snd_pcm_open` observed of the service state (for reconnection tests).
    let stateProbe = Mutex<(@Sendable () -> String)?>(nil)
    private let nextHandle = Atomic<Int>(0x1000)

    init(_ script: Script) { self.script = Mutex(script) }

    func record(_ call: String) { trace.withLock { $0.append(call) } }
    var calls: [String] { trace.withLock { $0 } }
    func count(_ call: String) -> Int { calls.filter { $0 == call }.count }

    var functions: ALSAFunctions {
        ALSAFunctions(
            open: { name, _, _, _ in
                let probe = self.stateProbe.withLock { $0 }
                self.record(probe.map { "snd_pcm_open(\($0()))" } ?? "snd_pcm_open")
                let rc = self.script.withLock { $0.open.isEmpty ? 0 : $0.open.removeFirst() }
                if rc < 0 { return (rc, nil) }
                return (0, OpaquePointer(bitPattern: self.nextHandle.add(16, ordering: .relaxed).newValue))
            },
            close: { _ in self.record("snd_pcm_close"); return 0 },
            hwParamsMalloc: { self.record("snd_pcm_hw_params_malloc"); return (0, OpaquePointer(bitPattern: 0x42)) },
            hwParamsFree: { _ in self.record("snd_pcm_hw_params_free") },
            hwParamsAny: { _, _ in self.record("snd_pcm_hw_params_any"); return 0 },
            hwParamsSetAccess: { _, _, _ in self.record("snd_pcm_hw_params_set_access"); return 0 },
            hwParamsSetFormat: { _, _, _ in
                self.record("snd_pcm_hw_params_set_format")
                return self.script.withLock { $0.setFormat }
            },
            hwParamsSetChannels: { _, _, _ in self.record("snd_pcm_hw_params_set_channels"); return 0 },
            hwParamsSetRateNear: { _, _, rate in self.record("snd_pcm_hw_params_set_rate_near"); return (0, rate) },
            hwParamsSetPeriodSizeNear: { _, _, f in self.record("snd_pcm_hw_params_set_period_size_near"); return (0, f) },
            hwParamsSetBufferSizeNear: { _, _, f in self.record("snd_pcm_hw_params_set_buffer_size_near"); return (0, f) },
            hwParams: { _, _ in self.record("snd_pcm_hw_params"); return 0 },
            prepare: { _ in self.record("snd_pcm_prepare"); return 0 },
            start: { _ in self.record("snd_pcm_start"); return 0 },
            drop: { _ in self.record("snd_pcm_drop"); return 0 },
            recover: { _, err, _ in self.record("snd_pcm_recover(\(err))"); return 0 },
            readi: { _, buffer, frames in
                self.record("snd_pcm_readi")
                let (next, block) = self.script.withLock { s -> (Int?, Bool) in
                    (s.readi.isEmpty ? nil : s.readi.removeFirst(), s.blockForever)
                }
                if block { return -Int(EAGAIN) }
                if let next, next <= 0 { return next }
                let n = min(Int(frames), next ?? Int(frames))
                buffer.initializeMemory(as: Int16.self, repeating: 100, count: n)
                return n
            },
            writei: { _, _, frames in
                self.record("snd_pcm_writei")
                let next = self.script.withLock { $0.writei.isEmpty ? nil : $0.writei.removeFirst() }
                return next ?? Int(frames)
            },
            delay: { _ in (0, 0) },
            pollDescriptorsCount: { _ in 0 },
            pollDescriptors: { _, _, _ in 0 },
            pollRevents: { _, _, _ in (0, 0) },
            poll: { fds, count, timeout in
                let (block, backOff) = self.script.withLock { ($0.blockForever, $0.sleepInBackOff) }
                if backOff && count == 1 {
                    let rc = Glibc.poll(fds, 1, timeout)   // the eventfd ends it early at stop
                    return rc < 0 ? -errno : rc
                }
                if block {
                    self.record("poll")
                    let rc = Glibc.poll(fds, nfds_t(count), -1)   // only the wake eventfd can end this
                    return rc < 0 ? -errno : rc
                }
                for i in 0..<count { fds[i].revents = 0 }
                return 0
            },
            configLoad: { _ in (0, nil) },
            configDelete: { _ in },
            strerror: { String(cString: snd_strerror($0)) }
        )
    }
}
