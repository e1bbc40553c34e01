import Foundation
import ParleyAudio
import ParleyDenoise
import ParleySpeech

/// Computes a speaker-and-room MLLR transform from kept recordings with
/// Debian's sphinxtrain, the way the CMU adaptation tutorial does for one
/// speaker: features with the model's own front end (sphinx_fe and the
/// model's feat.params), statistics of the recordings aligned to their
/// words (bw), and one global mean transform from them (mllr_solve).
/// PocketSphinx applies the result at run time (-mllr, ps_update_mllr), so
/// the model itself is never rewritten.
///
/// The model folder must hold, besides what PocketSphinx reads, the two
/// files bw needs that a PocketSphinx model does not: `mdef.txt` (the text
/// model definition) and `mixture_weights` (the float mixture weights of its
/// sendump). scripts/adapt-model.sh writes them into the adapted model it
/// builds, and `scripts/adapt/training-files.sh` into a copy of another model.
public struct RoomAdapter: Sendable {
    public struct Tools: Sendable {
        public var sphinxFE = "/usr/bin/sphinx_fe"
        public var bw = "/usr/lib/sphinxtrain/bw"
        public var mllrSolve = "/usr/lib/sphinxtrain/mllr_solve"
        public init() {}
    }

    public struct Outcome: Sendable, Equatable {
        /// The transform written (mllr_solve's text format).
        public var transform: URL
        /// Recordings the statistics were collected from.
        public var recordings: Int
        /// Seconds of their audio.
        public var seconds: Double
    }

    /// Fewer recordings than this estimate a transform from too little data
    /// to move 39-dimensional means reliably; the tutorial's minimum is a
    /// few sentences, and the room simulation (BENCHMARKS.md) starts at 5.
    public static let minimumRecordings = 5

    /// What the transform may change: the full affine map of the means, or
    /// only their shift (39 numbers instead of 546: a channel and room
    /// offset, estimable from a handful of recordings).
    public enum Kind: String, Sendable, CaseIterable {
        case full
        case shift
    }

    public var model: String
    public var dictionary: String
    public var tools: Tools
    public var kind: Kind
    /// The front end the decoder hears through (`speech.front_end`). With
    /// the neural one the recordings (kept as captured) are denoised before
    /// their features are computed: the transform must map the features the
    /// decoder is fed, not the room's raw ones.
    public var frontEnd: FrontEndSettings

    public init(model: String, dictionary: String = DecoderSettings().dictionary, tools: Tools = Tools(), kind: Kind = .full,
                frontEnd: FrontEndSettings = .none) {
        self.kind = kind
        self.frontEnd = frontEnd
        self.model = model
        self.dictionary = dictionary
        self.tools = tools
    }

    /// Whether `model` has the files bw needs.
    public static func canAdapt(model: String) -> Bool {
        ["mdef.txt", "mixture_weights", "means", "variances", "transition_matrices", "feat.params", "noisedict"]
            .allSatisfy { FileManager.default.fileExists(atPath: (model as NSString).appendingPathComponent($0)) }
    }

    /// Estimates the transform from `recordings` in `work` (a scratch
    /// folder, emptied first) and writes it to `output` atomically: an
    /// error leaves an earlier transform where it was.
    public func adapt(_ recordings: [KeptRecordings.Recording], work: URL, output: URL) throws -> Outcome {
        guard recordings.count >= Self.minimumRecordings else {
            throw RoomAdaptationError(
                "\(recordings.count) confirmed recording\(recordings.count == 1 ? "" : "s") kept; adapting needs at least \(Self.minimumRecordings)")
        }
        guard Self.canAdapt(model: model) else {
            throw RoomAdaptationError(
                "acoustic model \(model): missing mdef.txt or mixture_weights (the training files bw needs); use the adapted model, or write them with scripts/adapt/training-files.sh")
        }
        for tool in [tools.sphinxFE, tools.bw, tools.mllrSolve] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw RoomAdaptationError("\(tool) is missing: room adaptation needs Debian's sphinxtrain and sphinxbase-utils")
        }
        let files = FileManager.default
        try? files.removeItem(at: work)
        let features = work.appendingPathComponent("mfc"), accumulated = work.appendingPathComponent("accum")
        try files.createDirectory(at: features, withIntermediateDirectories: true)
        try files.createDirectory(at: accumulated, withIntermediateDirectories: true)
        let params = try FeatureParameters(folder: model)

        // The lists sphinxtrain reads: ids relative to one audio folder.
        var audioFolder = recordings[0].audio.deletingLastPathComponent()
        guard recordings.allSatisfy({ $0.audio.deletingLastPathComponent() == audioFolder }) else {
            throw RoomAdaptationError("the recordings must share one folder")
        }
        if frontEnd.isNeural {
            audioFolder = try denoised(recordings, into: work.appendingPathComponent("denoised"))
        }
        let ids = recordings.map(\.name)
        let fileIDs = work.appendingPathComponent("adapt.fileids")
        let transcription = work.appendingPathComponent("adapt.transcription")
        try (ids.joined(separator: "\n") + "\n").write(to: fileIDs, atomically: true, encoding: .utf8)
        try recordings.map { "<s> \($0.words) </s> (\($0.name))" }.joined(separator: "\n")
            .appending("\n").write(to: transcription, atomically: true, encoding: .utf8)
        // bw must know every word: the reduced dictionary holds them with the
        // pronunciations the decoder used (generated ones included).
        let words = Set(recordings.flatMap { $0.words.split(separator: " ").map(String.init) })
        let dictionaryFile = work.appendingPathComponent("adapt.dict")
        try Lexicon.dictionaryText(try Lexicon.shared(path: dictionary).entries(for: words))
            .write(to: dictionaryFile, atomically: true, encoding: .utf8)

        var rates = Set<Int>(), seconds = 0.0
        for recording in recordings {
            let (samples, rate) = try WAVFile.read(recording.audio)
            rates.insert(rate)
            seconds += Double(samples.count) / Double(rate)
        }
        guard rates.count == 1, let rate = rates.first else {
            throw RoomAdaptationError("the kept recordings have different sample rates (\(rates.sorted()))")
        }
        try run(tools.sphinxFE, [
            "-argfile", "\(model)/feat.params", "-samprate", "\(rate)", "-dither", "no",
            "-c", fileIDs.path, "-di", audioFolder.path, "-do", features.path,
            "-ei", "wav", "-eo", "mfc", "-mswav", "yes",
        ], log: work.appendingPathComponent("sphinx_fe.log"))
        // The front end's settings as the model was trained with them. Built
        // step by step: one literal of this size with `??` in it is more than
        // Swift 6.2's type checker finishes in time.
        let feature: [String] = [
            "-feat", params["feat"] ?? "1s_c_d_dd", "-cmn", params["cmn"] ?? "batch",
            "-agc", params["agc"] ?? "none", "-varnorm", params["varnorm"] ?? "no",
        ]
        let svspec: [String] = params["svspec"].map { ["-svspec", $0] } ?? []
        let modelFiles: [String] = [
            "-moddeffn", "\(model)/mdef.txt", "-ts2cbfn", ".\(params["model"] ?? "ptm").",
            "-meanfn", "\(model)/means", "-varfn", "\(model)/variances",
            "-mixwfn", "\(model)/mixture_weights", "-tmatfn", "\(model)/transition_matrices",
        ]
        let data: [String] = [
            "-dictfn", dictionaryFile.path, "-fdictfn", "\(model)/noisedict",
            "-ctlfn", fileIDs.path, "-lsnfn", transcription.path,
            "-cepdir", features.path, "-cepext", "mfc", "-accumdir", accumulated.path, "-timing", "no",
        ]
        try run(tools.bw, modelFiles + feature + svspec + data, log: work.appendingPathComponent("bw.log"))
        let solved = work.appendingPathComponent("mllr_matrix")
        try run(tools.mllrSolve, [
            "-meanfn", "\(model)/means", "-varfn", "\(model)/variances",
            "-outmllrfn", solved.path, "-accumdir", accumulated.path, "-mllrmult", kind == .full ? "yes" : "no",
        ], log: work.appendingPathComponent("mllr_solve.log"))
        guard let text = try? String(contentsOf: solved, encoding: .utf8), MLLRFile.isWellFormed(text) else {
            throw RoomAdaptationError("mllr_solve wrote no usable transform (see \(work.path)/mllr_solve.log)")
        }
        try files.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = try? files.removeItem(at: output)
        try files.moveItem(at: solved, to: output)
        return Outcome(transform: output, recordings: recordings.count, seconds: seconds)
    }

    /// The recordings through the neural front end, one utterance each as
    /// the daemon denoises a command, written under their names to `folder`
    /// (returned). The network is loaded for this run only.
    private func denoised(_ recordings: [KeptRecordings.Recording], into folder: URL) throws -> URL {
        let denoiser: NeuralDenoiser
        do {
            denoiser = try NeuralDenoiser(settings: frontEnd)
        } catch {
            throw RoomAdaptationError("the neural front end could not be loaded to adapt on what the decoder hears: \(error)")
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for recording in recordings {
            let (samples, rate) = try WAVFile.read(recording.audio)
            guard rate == NeuralDenoiser.sampleRate else {
                throw RoomAdaptationError("\(recording.audio.path): \(rate) Hz; the neural front end takes \(NeuralDenoiser.sampleRate) Hz")
            }
            try WAVFile.write(denoiser.denoise(utterance: samples), sampleRate: rate, to: folder.appendingPathComponent(recording.audio.lastPathComponent))
        }
        return folder
    }

    /// Runs one tool to its end, its output to `log`; a failure names the
    /// tool and quotes the end of its log.
    private func run(_ tool: String, _ arguments: [String], log: URL) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        // Below the listening threads: the device keeps hearing while it adapts.
        let nice = "/usr/bin/nice"
        if FileManager.default.isExecutableFile(atPath: nice) {
            process.executableURL = URL(fileURLWithPath: nice)
            process.arguments = ["-n", "10", tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let tail = ((try? String(contentsOf: log, encoding: .utf8)) ?? "")
                .split(separator: "\n").suffix(5).joined(separator: " | ")
            throw RoomAdaptationError("\((tool as NSString).lastPathComponent) failed (status \(process.terminationStatus)): \(tail)")
        }
    }
}

/// A model's feat.params as "name → value" (the leading dash dropped).
struct FeatureParameters {
    private var values: [String: String] = [:]
    init(folder: String) throws {
        let path = (folder as NSString).appendingPathComponent("feat.params")
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw RoomAdaptationError("\(path): cannot be read (\(error.localizedDescription))")
        }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: \.isWhitespace)
            if parts.count == 2, parts[0].hasPrefix("-") { values[String(parts[0].dropFirst())] = String(parts[1]) }
        }
    }
    subscript(_ name: String) -> String? { values[name] }
}

/// mllr_solve's text format: classes, streams, then per stream its length
/// and per class A (length² numbers), b and the variance scale (length each).
public enum MLLRFile {
    public static func isWellFormed(_ text: String) -> Bool {
        let numbers = text.split(whereSeparator: \.isWhitespace).map { Double($0) }
        guard numbers.count >= 2, !numbers.contains(nil), let classes = numbers[0].map(Int.init),
              let streams = numbers[1].map(Int.init), classes >= 1, streams >= 1 else { return false }
        var index = 2
        for _ in 0..<streams {
            guard index < numbers.count, let length = numbers[index].map(Int.init), length >= 1 else { return false }
            index += 1 + classes * (length * length + 2 * length)
        }
        return index == numbers.count
    }
}

public struct RoomAdaptationError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
