import Synchronization
@testable import ParleyAudio

/// A scripted speexdsp for call-trace tests: records every call by its C
/// name (with its arguments, so the settings can be checked) and injects
/// failures; each frame is changed in a known way (every sample + 1), so
/// tests see which samples went through the preprocessor, and the echo
/// canceller's output is the microphone minus the reference, so tests see
/// which reference sample went with which microphone sample.
final class MockSpeex: Sendable {
    struct Script {
        /// speex_preprocess_state_init returns NULL.
        var initFails = false
        /// The request number whose speex_preprocess_ctl returns -1.
        var refusedRequest: Int32?
        /// speex_echo_state_init returns NULL.
        var echoInitFails = false
    }

    let trace = Mutex<[String]>([])
    let script: Script
    private static var state: OpaquePointer { OpaquePointer(bitPattern: 0x5EE0)! }
    private static var echoState: OpaquePointer { OpaquePointer(bitPattern: 0xEC40)! }

    init(_ script: Script = Script()) { self.script = script }

    func record(_ call: String) { trace.withLock { $0.append(call) } }
    var calls: [String] { trace.withLock { $0 } }
    func count(_ prefix: String) -> Int { calls.filter { $0.hasPrefix(prefix) }.count }

    var functions: SpeexFunctions {
        SpeexFunctions(
            preprocessInit: { frame, rate in
                self.record("speex_preprocess_state_init(\(frame), \(rate))")
                return self.script.initFails ? nil : Self.state
            },
            preprocessControlInt: { state, request, value in
                precondition(state == Self.state)
                self.record("speex_preprocess_ctl(\(request), \(value))")
                return request == self.script.refusedRequest ? -1 : 0
            },
            preprocessControlFloat: { state, request, value in
                precondition(state == Self.state)
                self.record("speex_preprocess_ctl(\(request), \(value))")
                return request == self.script.refusedRequest ? -1 : 0
            },
            preprocessRun: { state, frame in
                precondition(state == Self.state)
                self.record("speex_preprocess_run")
                for i in 0..<FrontEnd.frameSamples { frame[i] &+= 1 }
                return 1
            },
            preprocessDestroy: { state in
                precondition(state == Self.state)
                self.record("speex_preprocess_state_destroy")
            },
            preprocessSetEchoState: { state, echo in
                precondition(state == Self.state && echo == Self.echoState)
                self.record("speex_preprocess_ctl(SET_ECHO_STATE)")
                return 0
            },
            echoInit: { frame, filter in
                self.record("speex_echo_state_init(\(frame), \(filter))")
                return self.script.echoInitFails ? nil : Self.echoState
            },
            echoControlInt: { state, request, value in
                precondition(state == Self.echoState)
                self.record("speex_echo_ctl(\(request), \(value))")
                return request == self.script.refusedRequest ? -1 : 0
            },
            echoCancel: { state, microphone, reference, out in
                precondition(state == Self.echoState)
                self.record("speex_echo_cancellation")
                for i in 0..<FrontEnd.frameSamples { out[i] = microphone[i] &- reference[i] }
            },
            echoDestroy: { state in
                precondition(state == Self.echoState)
                self.record("speex_echo_state_destroy")
            })
    }
}
