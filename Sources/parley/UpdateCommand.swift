import ArgumentParser
import Foundation

/// `parley update BUNDLE`: a RAUC bundle installed by the daemon into the
/// slot not running (A/B devices), which then restarts into it.
struct UpdateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Install a software update (a signed RAUC bundle, .raucb) and restart into it.",
        discussion: """
            parleyd checks the file, says it is installing, runs `rauc install` and answers once RAUC is done \
            (with RAUC's reason when it refuses the bundle); then it says so and restarts. After the restart, once \
            the new slot is marked good, the speaker says it is back. `parley status` shows both slots' versions.
            Example: parley update /data/parley-qemu.raucb
            """)

    @OptionGroup var options: ControlOptions
    @Argument(help: "The bundle (.raucb); a relative path is taken from the current folder.") var bundle: String

    func run() throws {
        // The daemon reads the file itself: it gets an absolute path.
        let path = bundle.hasPrefix("/") ? bundle
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(bundle).standardizedFileURL.path
        let response = try options.send(.update(path))
        output(options, response.message ?? "Installed; restarting.")
    }
}
