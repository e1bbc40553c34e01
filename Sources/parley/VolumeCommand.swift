import ArgumentParser
import ParleyControl
import ParleyCore

/// `parley volume [N|up|down|mute|unmute]`: the speaker's volume, read or changed.
struct VolumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "volume", abstract: "Show or change the speaker's volume (0-10).",
        discussion: "Examples: parley volume · parley volume up · parley volume 7 · parley volume mute")
    @OptionGroup var options: ControlOptions
    @Argument(help: "up, down, mute, unmute or a level 0-10; without it the level is shown.") var change: String?

    func validate() throws {
        if let change, VolumeChange(argument: change) == nil {
            throw ValidationError("'\(change)' is not a volume: expected \(VolumeChange.spellings)")
        }
    }

    func run() throws {
        let response = try options.send(.volume(change.flatMap(VolumeChange.init(argument:))))
        guard let volume = response.volume else {
            output(options, response.message ?? "")
            return
        }
        output(options, Self.line(volume))
    }

    static func line(_ volume: VolumeReport) -> String {
        "Volume \(volume.level) of 10\(volume.muted ? ", muted" : "") (\(volume.output))."
    }
}
