import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyCore

/// The speaker's volume in the daemon (issue 28): one place that voice,
/// buttons, `parley volume` and the control socket change it through. The
/// level is kept in the state store (written before a change is answered, so
/// it survives a power cut), driven into the card's mixer control or, where
/// there is none, into the playback's sample scaling, and shown on the LEDs.
/// Timer alarms play at `alarmFloor` at least, muted or not.
public actor VolumeService: VolumeControl {
    /// How the level reaches the speaker.
    public enum Output: Sendable {
        /// The board file's mixer control.
        case mixer(ALSAMixer)
        /// Parley scales its own samples (no mixer control, or it failed to open).
        case software(PlaybackService)
        /// No speaker is wired: the level is only kept.
        case none
    }

    private let setting: VolumeSetting
    public nonisolated let output: Output
    private let alarmFloor: Int
    /// The speaker's playback, whose queue an alarm waits to play out.
    private let playback: PlaybackService?
    private let show: @Sendable (Volume) -> Void
    private let logger: Logger
    /// Alarms sounding now: while any is, output stays at the alarm level.
    private var alarms = 0
    /// The level last put on the output (nil before `restore`), so nothing is written twice.
    private var applied: (level: Int, muted: Bool)?
    /// A failing mixer is logged once, not at every change.
    private var outputFailed = false

    public init(setting: VolumeSetting, output: Output, playback: PlaybackService?, alarmFloor: Int, logger: Logger,
                show: @escaping @Sendable (Volume) -> Void = { _ in }) {
        self.setting = setting
        self.output = output
        self.playback = playback
        self.alarmFloor = alarmFloor
        self.logger = logger
        self.show = show
    }

    /// Puts the stored level on the output (at start, before anything plays).
    public func restore() async {
        let volume = await setting.current()
        await logStoreProblem()
        put(level: volume.level, muted: volume.muted)
        logger.info("volume", metadata: ["level": "\(volume)", "output": "\(outputDescription)"])
    }

    public func current() async -> Volume { await setting.current() }

    @discardableResult
    public func change(_ change: VolumeChange) async -> Volume {
        let volume = await setting.change(change)
        await logStoreProblem()
        if alarms == 0 { put(level: volume.level, muted: volume.muted) }
        logger.notice("volume changed", metadata: ["change": "\(change)", "volume": "\(volume)"])
        show(volume)
        return volume
    }

    public func alarmStarts() async {
        alarms += 1
        let volume = await setting.current()
        let level = volume.alarmLevel(floor: alarmFloor)
        if level != volume.audibleLevel { logger.info("alarm at the floor", metadata: ["level": "\(level)"]) }
        put(level: level, muted: false)
    }

    /// Back to the set level once the alarm's sounds have played; the wait
    /// runs in its own task so the engine goes on meanwhile.
    public func alarmQueued() async {
        guard let playback else { return await alarmOver() }
        Task { [self] in
            await playback.drain()
            await alarmOver()
        }
    }

    private func alarmOver() async {
        alarms = max(0, alarms - 1)
        guard alarms == 0 else { return }
        let volume = await setting.current()
        put(level: volume.level, muted: volume.muted)
    }

    /// The level as `parley volume` shows it.
    public func report() async -> VolumeReport {
        let volume = await setting.current()
        return VolumeReport(level: volume.level, muted: volume.muted, output: outputDescription)
    }

    public nonisolated var outputDescription: String {
        switch output {
        case .mixer(let mixer): "mixer control '\(mixer.control)' on \(mixer.card)"
        case .software: "software (samples scaled)"
        case .none: "no speaker wired"
        }
    }

    private func put(level: Int, muted: Bool) {
        if let applied, applied.level == level, applied.muted == muted { return }
        switch output {
        case .mixer(let mixer):
            do {
                try mixer.apply(level: level, muted: muted)
                outputFailed = false
            } catch {
                if !outputFailed { logger.error("volume not set on the mixer: \(error)") }
                outputFailed = true
                return
            }
        case .software(let playback):
            playback.setGain(muted ? 0 : Volume.gain(level: level))
        case .none:
            break
        }
        applied = (level, muted)
    }

    private func logStoreProblem() async {
        if let problem = await setting.lastError { logger.error("\(problem)") }
    }
}
