import Foundation
import Synchronization

/// The capture service's state, readable from any thread.
public enum CaptureState: UInt8, Sendable, CustomStringConvertible {
    case stopped, running
    /// The device vanished (e.g. USB microphone unplugged); reopening with back-off.
    case reconnecting
    /// A file source reached `inputFrameLimit`; idle until stopped.
    case endOfInput

    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .running: "running"
        case .reconnecting: "reconnecting"
        case .endOfInput: "end of input"
        }
    }
}

/// Counters the capture thread updates atomically and other threads read
/// (status display, LEDs, logging). The audio thread never logs.
public final class CaptureStatus: Sendable {
    let stateValue = Atomic<UInt8>(CaptureState.stopped.rawValue)
    let periodCount = Atomic<Int>(0)
    let frameCount = Atomic<Int>(0)
    let overrunCount = Atomic<Int>(0)
    let reconnectCount = Atomic<Int>(0)
    let lastErrnoValue = Atomic<Int32>(0)
    let threadIDValue = Atomic<Int32>(0)
    let cpuNanosecondsValue = Atomic<Int64>(0)
    let realtimeValue = Atomic<Bool>(false)
    let delayFramesValue = Atomic<Int>(0)
    let deviceRateValue = Atomic<Int>(0)
    let levelValue = Atomic<Int>(0)

    public var state: CaptureState { CaptureState(rawValue: stateValue.load(ordering: .acquiring)) ?? .stopped }
    /// Successful reads from the device.
    public var periods: Int { periodCount.load(ordering: .relaxed) }
    /// Device frames read (before conversion).
    public var frames: Int { frameCount.load(ordering: .relaxed) }
    /// Overruns (-EPIPE) recovered with snd_pcm_recover.
    public var overruns: Int { overrunCount.load(ordering: .relaxed) }
    /// Times the device was reopened after vanishing.
    public var reconnects: Int { reconnectCount.load(ordering: .relaxed) }
    /// errno of the last device failure (0: none).
    public var lastErrno: Int32 { lastErrnoValue.load(ordering: .relaxed) }
    /// Kernel thread id of the capture thread (0 before start).
    public var threadID: Int32 { threadIDValue.load(ordering: .relaxed) }
    /// CPU time the capture thread used, published when it stops.
    public var cpuNanoseconds: Int64 { cpuNanosecondsValue.load(ordering: .acquiring) }
    /// Whether SCHED_FIFO was granted.
    public var isRealtime: Bool { realtimeValue.load(ordering: .relaxed) }
    /// Device frames captured but not yet read after the last read
    /// (`snd_pcm_delay`): how far the ring lags the microphone, which the
    /// echo reference adds to place what is played (`EchoReference`).
    public var delayFrames: Int { delayFramesValue.load(ordering: .relaxed) }
    /// The device's negotiated rate (0 before it is open).
    public var deviceRate: Int { deviceRateValue.load(ordering: .relaxed) }

    /// The microphone's level now, 0...32767: the loudest sample of the
    /// latest period, or less than the level before when that was louder
    /// (it falls by a quarter every 10 ms of audio, as a meter's needle would), so
    /// whoever samples it a few times a second still sees a word's peak.
    /// One atomic store a period by the capture thread, nothing more.
    public var level: Int { levelValue.load(ordering: .relaxed) }

    func set(_ state: CaptureState) { stateValue.store(state.rawValue, ordering: .releasing) }

    /// All counters at once, for status displays and periodic logging by another thread.
    public var snapshot: Snapshot {
        Snapshot(state: state, periods: periods, frames: frames, overruns: overruns, reconnects: reconnects,
                 lastErrno: lastErrno, isRealtime: isRealtime)
    }

    public struct Snapshot: Sendable, Equatable, CustomStringConvertible {
        public var state: CaptureState
        public var periods: Int
        public var frames: Int
        public var overruns: Int
        public var reconnects: Int
        public var lastErrno: Int32
        public var isRealtime: Bool

        public var description: String {
            "capture \(state): \(periods) periods, \(frames) frames, \(overruns) overruns, \(reconnects) reconnects"
                + (lastErrno != 0 ? ", last errno \(lastErrno)" : "") + (isRealtime ? ", SCHED_FIFO" : "")
        }
    }
}
