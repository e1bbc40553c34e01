import ArgumentParser
import Foundation
import ParleyAudio
import ParleyRoom
import ParleySpeech

/// `parley adapt`: the device learns its room from the confirmed commands it
/// kept (`adaptation.keep_audio`); the daemon swaps the new transform in
/// without a restart. With `--recordings` it runs here instead, on a list of
/// labelled recordings, writing the transform to `--output` (the room
/// simulation in training/bin/eval-room.sh uses this: the same code).
struct AdaptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapt",
        abstract: "Adapt the recogniser to this room and household from the kept confirmed commands.",
        discussion: """
            Needs adaptation.keep_audio: true in parley.yaml and at least \(RoomAdapter.minimumRecordings) commands confirmed with the button since.
            Offline: parley adapt --recordings LIST.tsv --output room.mllr [--acoustic-model adapted|stock|DIR]
            (LIST.tsv: one "file.wav<TAB>words" per line, the WAVs in one folder).
            """)

    @OptionGroup var options: ControlOptions

    @Option(help: "Adapt here on these labelled recordings (\"file.wav<TAB>words\" lines) instead of asking the daemon.")
    var recordings: String?

    @Option(help: "With --recordings: where to write the transform.")
    var output: String?

    @Option(help: "With --recordings: the acoustic model to adapt (adapted, stock or a folder holding mdef.txt and mixture_weights).")
    var acousticModel: String = "adapted"

    @Option(help: "With --recordings: full (the affine map of the means) or shift (their offset only).")
    var transform: String = "full"

    @Option(help: "With --recordings: the front end the decoder hears through, as speech.front_end: none (the default) or neural (the recordings are denoised first, as the daemon does with it).")
    var frontEnd: String = "none"

    func validate() throws {
        guard RoomAdapter.Kind(rawValue: transform) != nil else { throw ValidationError("--transform \(transform): expected full or shift") }
        do { _ = try FrontEndSettings(parsing: frontEnd) } catch { throw ValidationError("--front-end \(frontEnd): \(error)") }
        if recordings != nil && output == nil { throw ValidationError("--recordings needs --output FILE") }
        if recordings == nil && output != nil { throw ValidationError("--output is only for --recordings") }
    }

    func run() throws {
        guard let recordings, let output else {
            let response = try options.send(.adapt)
            if !options.json { print(response.message ?? "Adapted.") }
            return
        }
        let model: String
        do { model = try AcousticModel(parsing: acousticModel).folder } catch {
            throw ValidationError("--acoustic-model \(acousticModel): \(error)")
        }
        let list = try Self.readList(recordings)
        let settings = try FrontEndSettings(parsing: frontEnd)
        let adapter = RoomAdapter(model: model, kind: RoomAdapter.Kind(rawValue: transform) ?? .full,
                                  frontEnd: settings.isNeural ? settings : .none)
        let work = URL(fileURLWithPath: output + ".work")
        defer { try? FileManager.default.removeItem(at: work) }
        do {
            let outcome = try adapter.adapt(list, work: work, output: URL(fileURLWithPath: output))
            print("\(output): from \(outcome.recordings) recordings, \(String(format: "%.1f", outcome.seconds)) s of speech, model \(model)")
        } catch {
            FileHandle.standardError.write(Data("parley adapt: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// "file.wav<TAB>words" lines; an error names the line.
    static func readList(_ path: String) throws -> [KeptRecordings.Recording] {
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ValidationError("--recordings \(path): cannot be read (\(error.localizedDescription))")
        }
        var list: [KeptRecordings.Recording] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].hasSuffix(".wav"), !parts[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("\(path):\(index + 1): expected \"file.wav<TAB>words\"")
            }
            list.append(KeptRecordings.Recording(audio: URL(fileURLWithPath: parts[0]), words: parts[1]))
        }
        return list
    }
}
