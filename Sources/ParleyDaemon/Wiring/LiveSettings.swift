import Foundation
import ParleyConfiguration

/// Settings changed on the page put in use without a restart, where the
/// part that uses them can take a new value: the voice (name, rate,
/// loudness) from the next line spoken, the time zone at once, the wake
/// word and its sensitivity from the next utterance (the listener makes its
/// decoders again with them). The board is opened at start: it waits for
/// parleyd's next start, and the page says so beside it.
public struct LiveSettings: Sendable {
    public let components: DaemonComponents

    public init(components: DaemonComponents) { self.components = components }

    /// parley.yaml keys the page writes that take effect only at the next start, and why.
    public static let needRestart: [String: String] = [
        "board": "the board's pins and sound devices are opened when parleyd starts",
    ]

    /// Puts `config`'s values of `keys` in use; returns the keys applied now
    /// and, for each key that could not be, why.
    public func apply(_ config: ParleyConfig, keys: Set<String>) async -> (applied: [String], failed: [String: String]) {
        var applied: [String] = [], failed: [String: String] = [:]
        let voiceKeys = keys.intersection(["voice.name", "voice.rate", "voice.volume"])
        if !voiceKeys.isEmpty {
            if let speaker = components.speaker {
                do {
                    try await speaker.setVoice(config.voice)
                    applied += voiceKeys.sorted()
                } catch {
                    for key in voiceKeys { failed[key] = "espeak-ng refused it (\(error)); the voice in use stays until the next start" }
                }
            } else {
                for key in voiceKeys { failed[key] = "this parleyd has no speech out" }
            }
        }
        if keys.contains("time_zone") {
            let zone = config.timeZone.flatMap(TimeZone.init(identifier:)) ?? .current
            if let localTime = components.localTime {
                await localTime.change(to: zone)
                applied.append("time_zone")
            } else {
                failed["time_zone"] = "this parleyd has no clock to set"
            }
        }
        let wakeKeys = keys.intersection(["wake.name", "wake.sensitivity"])
        if !wakeKeys.isEmpty {
            if let applyWake = components.applyWake {
                await applyWake(config.wake)
                applied += wakeKeys.sorted()
            } else {
                for key in wakeKeys { failed[key] = "this parleyd does not listen" }
            }
        }
        return (applied, failed)
    }
}
