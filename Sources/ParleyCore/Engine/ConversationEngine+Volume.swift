/// The volume built-ins and buttons (issue 28): they answer with one word or
/// a tick at the new level, never a sentence, and leave any open
/// conversation as it was.
extension ConversationEngine {
    /// Plugs in the daemon's volume (mixer or sample scaling, LEDs, alarm floor).
    public func setVolumeControl(_ control: any VolumeControl) {
        volumeControl = control
    }

    /// The volume now.
    public func volume() async -> Volume { await volumeControl.current() }

    /// "louder", "volume seven", "mute", "what's the volume".
    func adjustVolume(_ builtin: PhraseCompiler.Builtin, values: [String: String]) async {
        let change: VolumeChange?
        switch builtin {
        case .volumeUp: change = .up
        case .volumeDown: change = .down
        case .mute: change = .mute
        case .unmute: change = .unmute
        case .volumeSet:
            guard let level = values[PhraseCompiler.volumeBinding].flatMap(Int.init) else {
                await log("volume: no level in \(values)")
                await rest()
                return
            }
            change = .set(level)
        default: change = nil
        }
        let volume = if let change { await volumeControl.change(change) } else { await volumeControl.current() }
        await log("volume \(change?.description ?? "asked"): \(volume)")
        // Muted, a word would not be heard; the LEDs show it. The word is not
        // the last line: "repeat" still repeats what was said before.
        if change != .mute {
            await setLED(.speaking)
            await sink.emit(.spoke(volume.word))
        }
        await rest()
    }

    /// A volume button: the level moves one step and a tick plays at it.
    func pressVolume(_ change: VolumeChange) async {
        let volume = await volumeControl.change(change)
        await log("volume \(change) by button: \(volume)")
        if !volume.muted { await sink.emit(.sound(.volume)) }
    }
}
