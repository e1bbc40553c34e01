import ArgumentParser
import Foundation
import ParleyDevice
import ParleySpeech

/// `parley wake train NAME`: a speech_embedding head for a name a person
/// picks, made from synthetic voices and the stored negative bank by the
/// training package (training/bin/train-wake.sh, training/parley_training) of
/// the checkout this parley was built in. The head lands where the daemon
/// looks first (/var/lib/parley/wake/NAME.embedding.json), so setting
/// `wake.name: NAME` and `wake.detector: embedding` uses it with no new
/// package or build. Training needs the checkout and a few minutes of the
/// build machine; a speaker without one says so.
struct WakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wake", abstract: "Wake names: train a head for a new one.", subcommands: [Train.self])

    struct Train: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "train",
            abstract: "Train a wake head for NAME from synthetic voices (minutes, on the build machine).")

        @Argument(help: "The name: one to three words of letters, e.g. \"jarvis\" or \"hey kettle\".")
        var name: String
        @Option(help: "Where to write the head (default: \(KeywordModel.trainedWakeFolder)/NAME.embedding.json).")
        var out: String?

        func validate() throws {
            let words = name.lowercased().split(separator: " ")
            guard !words.isEmpty, words.count <= 3, words.allSatisfy({ $0.allSatisfy { $0.isLetter || $0 == "'" } }) else {
                throw ValidationError("\"\(name)\" is not one to three words of letters")
            }
        }

        func run() throws {
            let script = "training/bin/train-wake.sh"
            guard let root = SourceTree.root(holding: script) else {
                throw ValidationError("""
                    the training scripts are not here (\(script) of a Parley checkout): train on the build machine \
                    and copy NAME.embedding.json to \(KeywordModel.trainedWakeFolder) on the speaker
                    """)
            }
            let file = name.lowercased().split(separator: " ").joined(separator: "-") + ".embedding.json"
            let target = out ?? KeywordModel.trainedWakeFolder + "/" + file
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [root.appendingPathComponent(script).path, name.lowercased(), target]
            process.currentDirectoryURL = root
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                FileHandle.standardError.write(Data("parley wake train: \(script) failed (exit \(process.terminationStatus))\n".utf8))
                throw ExitCode(process.terminationStatus)
            }
            print("\(target): the wake head for \"\(name.lowercased())\". Use it with wake.name: \(name.lowercased()) and wake.detector: embedding in parley.yaml.")
        }
    }
}
