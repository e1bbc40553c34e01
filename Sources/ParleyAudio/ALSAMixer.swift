import CALSA
import Glibc
import Synchronization

/// A card's playback volume control through alsa-lib's simple mixer API (the
/// board file's `audio.mixer-control` on `audio.mixer-card`): the speaker's
/// level 0...10 set on it, so the card itself is louder or quieter and
/// Parley's samples stay at full scale. Where the card has no such control
/// the daemon scales its samples instead (`PlaybackService.setGain`).
///
/// Every call goes through `ALSAFunctions.mixer`; the handle has one owner,
/// this object, which closes it in `deinit`.
public final class ALSAMixer: Sendable {
    /// What the control holds now, in its own units.
    public struct Reading: Sendable, Equatable, CustomStringConvertible {
        public var value: Int
        public var range: ClosedRange<Int>
        /// The playback switch (true: sound on); nil when the control has none.
        public var switchOn: Bool?
        public var description: String {
            "\(value) of \(range.lowerBound)...\(range.upperBound)" + (switchOn.map { $0 ? ", on" : ", off" } ?? "")
        }
    }

    public let card: String
    public let control: String
    /// The control's raw range (`snd_mixer_selem_get_playback_volume_range`).
    public let range: ClosedRange<Int>
    public let hasSwitch: Bool
    private let alsa: ALSAFunctions
    /// The mixer and the element, used under the lock (alsa-lib's handles are not thread-safe).
    private let handles: Mutex<Handles>

    private struct Handles {
        var mixer: OpaquePointer?
        var element: OpaquePointer?
    }

    /// Opens `control` on `card` ("hw:0", "default"): a clear error naming the
    /// card, the control and the controls the card has when it is not there.
    public convenience init(card: String, control: String) throws(AudioError) {
        try self.init(card: card, control: control, alsa: .system)
    }

    init(card: String, control: String, alsa: ALSAFunctions) throws(AudioError) {
        self.card = card
        self.control = control
        self.alsa = alsa
        let mixerAPI = alsa.mixer
        let device = "mixer '\(card)'"
        func fail(_ call: ALSACall, _ rc: Int32) -> AudioError {
            let status = ALSAStatus(call: call, errno: -rc)
            if call == .mixerAttach, [ENOENT, ENODEV, ENXIO].contains(status.errno) {
                return .deviceNotFound(device: device, detail: alsa.strerror(rc))
            }
            return .from(status, device: device, requested: "control '\(control)'", alsa: alsa)
        }
        let (openStatus, opened) = mixerAPI.open()
        guard openStatus >= 0, let mixer = opened else { throw fail(.mixerOpen, openStatus) }
        var owned: OpaquePointer? = mixer
        defer { if let owned { _ = mixerAPI.close(owned) } }
        let attached = mixerAPI.attach(mixer, card)
        guard attached >= 0 else { throw fail(.mixerAttach, attached) }
        let registered = mixerAPI.register(mixer)
        guard registered >= 0 else { throw fail(.mixerRegister, registered) }
        let loaded = mixerAPI.load(mixer)
        guard loaded >= 0 else { throw fail(.mixerLoad, loaded) }
        guard let element = mixerAPI.find(mixer, control, 0), mixerAPI.hasPlaybackVolume(element) else {
            let names = mixerAPI.elementNames(mixer)
            throw AudioError.deviceNotFound(
                device: "\(device) control '\(control)'",
                detail: "no playback volume control of that name; the card has \(names.isEmpty ? "none" : names.map { "'\($0)'" }.joined(separator: ", "))")
        }
        let (rangeStatus, low, high) = mixerAPI.playbackVolumeRange(element)
        guard rangeStatus >= 0 else { throw fail(.mixerVolumeRange, rangeStatus) }
        guard high > low else {
            throw AudioError.invalidConfiguration("\(device) control '\(control)' has an empty volume range \(low)...\(high)")
        }
        range = low...high
        hasSwitch = mixerAPI.hasPlaybackSwitch(element)
        handles = Mutex(Handles(mixer: mixer, element: element))
        owned = nil
    }

    deinit {
        let mixer = handles.withLock { handles -> OpaquePointer? in
            defer { handles = Handles() }
            return handles.mixer
        }
        if let mixer { _ = alsa.mixer.close(mixer) }
    }

    /// The raw value for `level` 0...10: the range's ends at 0 and 10, even
    /// steps between (a card's range is usually in dB steps already).
    public static func raw(level: Int, in range: ClosedRange<Int>) -> Int {
        let level = min(max(level, 0), 10)
        let span = Double(range.upperBound - range.lowerBound)
        return range.lowerBound + Int((span * Double(level) / 10).rounded())
    }

    /// Sets the control for `level` and the mute flag: the playback switch
    /// off where there is one, the bottom of the range where there is not.
    public func apply(level: Int, muted: Bool) throws(AudioError) {
        let value = muted && !hasSwitch ? range.lowerBound : Self.raw(level: level, in: range)
        let mixerAPI = alsa.mixer
        let result: (ALSACall, Int32)? = handles.withLock { handles in
            guard let element = handles.element else { return (.mixerSetVolume, -EBADF) }
            let set = mixerAPI.setPlaybackVolume(element, value)
            if set < 0 { return (.mixerSetVolume, set) }
            if hasSwitch {
                let switched = mixerAPI.setPlaybackSwitch(element, !muted)
                if switched < 0 { return (.mixerSetSwitch, switched) }
            }
            return nil
        }
        if let failure = result {
            throw AudioError.from(ALSAStatus(call: failure.0, errno: -failure.1), device: "mixer '\(card)' control '\(control)'",
                                  requested: "level \(level)", alsa: alsa)
        }
    }

    /// What the control holds now, read back from the card.
    public func reading() throws(AudioError) -> Reading {
        let mixerAPI = alsa.mixer
        let range = range
        let hasSwitch = hasSwitch
        let result: Result<Reading, ALSAStatus> = handles.withLock { handles in
            guard let element = handles.element else { return .failure(ALSAStatus(call: .mixerGetVolume, errno: EBADF)) }
            let (volumeStatus, value) = mixerAPI.playbackVolume(element)
            if volumeStatus < 0 { return .failure(ALSAStatus(call: .mixerGetVolume, errno: -volumeStatus)) }
            var switchOn: Bool?
            if hasSwitch {
                let (switchStatus, on) = mixerAPI.playbackSwitch(element)
                if switchStatus < 0 { return .failure(ALSAStatus(call: .mixerGetSwitch, errno: -switchStatus)) }
                switchOn = on
            }
            return .success(Reading(value: value, range: range, switchOn: switchOn))
        }
        switch result {
        case .success(let reading): return reading
        case .failure(let status):
            throw AudioError.from(status, device: "mixer '\(card)' control '\(control)'", requested: "a reading", alsa: alsa)
        }
    }
}
