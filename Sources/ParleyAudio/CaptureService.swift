import CALSA
import Foundation
import CParleyShims
import Glibc
import Logging
import Synchronization

/// Captures from an ALSA PCM on a dedicated named thread, converts to 16 kHz
/// mono Int16 and writes every period into `ring`. Start and stop from any
/// thread; read `ring` and `status` from any thread.
public final class CaptureService: Sendable {
    public let configuration: CaptureConfiguration
    /// The audio, for the recogniser and anyone who needs the recent past.
    public let ring: AudioRing
    public let status = CaptureStatus()
    private let alsa: ALSAFunctions
    private let logger: Logger
    private let running = Mutex<AudioThread?>(nil)
    private let control = StopFlag()
    private let wake: WakeSignal

    public convenience init(configuration: CaptureConfiguration, logger: Logger = Logger(label: "parley.audio.capture")) throws(AudioError) {
        try self.init(configuration: configuration, logger: logger, alsa: .system)
    }

    init(configuration: CaptureConfiguration, logger: Logger, alsa: ALSAFunctions) throws(AudioError) {
        try configuration.format.validate()
        self.configuration = configuration
        self.alsa = alsa
        self.logger = logger
        ring = AudioRing(seconds: configuration.ringSeconds, sampleRate: configuration.outputSampleRate)
        wake = try WakeSignal()
    }

    deinit { stop() }

    /// Opens the device (throwing a clear error for a wrong name, a busy
    /// device or an unsupported format) and starts the capture thread.
    public func start() throws(AudioError) {
        let config = configuration
        // Held here only until the loop takes it: a device that vanishes at
        // once must be closed when the loop lets go of it, not kept open by
        // this frame until start() returns.
        var opened: PCMHandle? = try openDevice(config)
        logger.info("capture opened", metadata: [
            "device": "\(config.device)", "format": "\(opened.map { "\($0.negotiated)" } ?? "")",
        ])
        try running.withLock { (thread: inout AudioThread?) throws(AudioError) in
            guard thread == nil else { return }
            control.stopping.store(false, ordering: .sequentiallyConsistent)
            wake.consume()
            let loop = CaptureLoop(pcm: opened, configuration: config, alsa: alsa, ring: ring, status: status,
                                   control: control, wake: wake, logger: logger)
            opened = nil
            let transfer = UncheckedTransfer(loop)
            status.set(.running)
            thread = try AudioThread(name: config.threadName) { transfer.value.run() }
        }
    }

    /// Opens the device, or throws the error a person can act on.
    private func openDevice(_ config: CaptureConfiguration) throws(AudioError) -> PCMHandle {
        switch PCMHandle.open(config.device, stream: SND_PCM_STREAM_CAPTURE, format: config.format, alsa: alsa) {
        case .success(let handle):
            return handle
        case .failure(let failure):
            status.lastErrnoValue.store(failure.errno, ordering: .relaxed)
            throw AudioError.from(failure, device: config.device.name, requested: config.format.description, alsa: alsa)
        }
    }

    /// Like `start()`, but a device that cannot be opened now (a USB
    /// microphone not plugged in yet, a card another program holds, a wrong
    /// name fixed by plugging in the right card) does not stop the caller:
    /// the capture thread starts in `.reconnecting` and reopens the device
    /// with the same back-off as after an unplug. Returns why the device
    /// could not be opened (nil when it was), for the caller to say once;
    /// `problem` keeps it for status displays until the device is back.
    @discardableResult
    public func startOrKeepTrying() -> AudioError? {
        do {
            try start()
            return nil
        } catch {
            launchReconnecting(after: error)
            return error
        }
    }

    /// Why the device is not delivering audio, while it is not (nil when
    /// running): the reason it could not be opened at start, or the errno of
    /// the last failed reopen.
    public var problem: String? {
        guard status.state == .reconnecting else { return nil }
        let lastErrno = status.lastErrno
        if let initial = initialFailure.withLock({ $0 }), status.reconnects == 0 { return initial }
        return lastErrno != 0
            ? "audio device '\(configuration.device.name)' lost: \(alsa.strerror(-lastErrno)) (errno \(lastErrno))"
            : "audio device '\(configuration.device.name)' lost"
    }

    /// The description of the error `startOrKeepTrying` met, until the
    /// device was opened once.
    private let initialFailure = Mutex<String?>(nil)

    private func launchReconnecting(after error: AudioError) {
        initialFailure.withLock { $0 = error.description }
        let config = configuration
        running.withLock { thread in
            guard thread == nil else { return }
            control.stopping.store(false, ordering: .sequentiallyConsistent)
            wake.consume()
            let loop = CaptureLoop(pcm: nil, configuration: config, alsa: alsa, ring: ring, status: status,
                                   control: control, wake: wake, logger: logger)
            let transfer = UncheckedTransfer(loop)
            status.set(.reconnecting)
            do {
                thread = try AudioThread(name: config.threadName) { transfer.value.run() }
            } catch {
                // No thread, no retries: say so (this is the one place it is known).
                status.set(.stopped)
                logger.error("capture thread could not start: \(error)")
            }
        }
    }

    /// Stops promptly: wakes the thread out of poll(2) and joins it.
    public func stop() {
        running.withLock { thread in
            guard let current = thread else { return }
            control.stopping.store(true, ordering: .sequentiallyConsistent)
            wake.signal()
            current.join()
            thread = nil
            status.set(.stopped)
        }
    }

}

/// The stop request shared by a service and its thread (the thread must not
/// reference the service itself, which may be in deinit when it stops).
final class StopFlag: Sendable {
    let stopping = Atomic<Bool>(false)
    var isStopping: Bool { stopping.load(ordering: .acquiring) }
}

/// Hands a non-Sendable value to the one thread that will own it from now on.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
