import ArgumentParser
import Foundation
import ParleyAudio
import ParleyCore
import ParleySpeech

/// The evaluation recordings (docs/evaluation-data.md): the folder
/// PARLEY_SHARED_DATA names. The evaluation scripts set it (scripts/lib/
/// evaluation-data.sh: the data folder of the `shared` folder beside the checkout); the
/// recordings are not in the repository (Tests/Fixtures holds the tests'
/// small subset), so the benchmark names no default of its own.
///
/// `path` in the evaluation data. A benchmark that needs it stops with a
/// message that says where the data was looked for and how to point at it.
func sharedData(_ path: String) -> URL {
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data(("parley-bench: " + message + "\n").utf8))
        exit(2)
    }
    guard let root = ProcessInfo.processInfo.environment["PARLEY_SHARED_DATA"], !root.isEmpty else {
        fail("evaluation data needed (\(path)): set PARLEY_SHARED_DATA to the folder of the evaluation recordings "
            + "(docs/evaluation-data.md); the scripts in scripts/ set it (scripts/lib/evaluation-data.sh)")
    }
    let url = URL(fileURLWithPath: root).appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: url.path) else {
        fail("evaluation data missing: \(url.path) (PARLEY_SHARED_DATA=\(root); docs/evaluation-data.md; "
            + "Tests/Fixtures holds only the tests' small subset)")
    }
    return url
}

/// Unbuffered line output, so long runs show progress when redirected.
func emit(_ items: String...) {
    FileHandle.standardOutput.write(Data((items.joined(separator: " ") + "\n").utf8))
}

func decoderSettings(_ overrides: [String]) throws -> DecoderSettings {
    var s = DecoderSettings()
    for o in overrides { try s.apply(o) }
    return s
}

/// Command acceptance on the coffee-maker recordings, clean and in kitchen noise.
struct SpeechCoffee: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speech-coffee",
        abstract: "Coffee-maker command acceptance, RTF, memory, false acceptance, through the daemon's listening path.",
        discussion: """
            Each recording goes through the ListeningDriver (endpointer, segmenter, streaming decoder), as \
            `parley understand` and parleyd listen; --buffered decodes each whole file with the buffered \
            CommandRecognizer instead (the figures before the driver).
            """)

    @Option(name: .customLong("snr"), parsing: .upToNextOption, help: "SNRs in dB; 'clean' for no noise.")
    var snrs: [String] = ["clean"]
    @Option(name: .customLong("set"), help: "Decoder setting name=value (repeatable).")
    var settings: [String] = []
    @Option(help: "Garbage path prior probability (0 disables the garbage path).")
    var garbage: Double = 1
    @Option(help: "Garbage path cost per phone.")
    var phonePenalty: Double = 1
    @Option(help: "Rejection threshold: command-vs-phone-loop score per frame.")
    var threshold: Double = -1.0
    @Option(help: "Noise-aware rejection: threshold relaxation per dB of estimated SNR below --clean-snr (0: fixed).")
    var relax: Double = RejectionPolicy().relaxPerDecibel
    @Option(help: "Estimated SNR (dB) at and above which the threshold is not relaxed.")
    var cleanSNR: Double = RejectionPolicy().cleanSNR
    @Option(help: "Most speech the command path may leave as silence, per recognised word frame (a large value disables the check).")
    var maxAbsorbed: Double = RejectionPolicy().maximumAbsorbedSpeech
    @Option(help: "dB above --clean-snr over which the absorbed-speech check fades in.")
    var quietSpan: Double = RejectionPolicy().quietSpan
    @Option(help: "Only the first N recordings.")
    var limit: Int?
    @Flag(help: "Run against a soup grammar and count recordings that produce an intent (false acceptance).")
    var falseAcceptance = false
    @Flag(help: "Print each failure.")
    var verbose = false
    @Flag(help: "Decode each whole file with the buffered CommandRecognizer instead of the listening path.")
    var buffered = false

    func run() throws {
        let settings = try decoderSettings(settings)
        var set = try LabelledSet.load(labels: sharedData("coffee-maker/labels.json"), folder: sharedData("coffee-maker/clean"))
        if let limit { set.items = Array(set.items.prefix(limit)) }
        let model = falseAcceptance ? BenchGrammars.soup : try RhinoContext.load(sharedData("coffee-maker/grammar.yaml"), app: "Coffee Maker")
        let rejection = garbage > 0 ? RejectionModel(phonePenalty: phonePenalty) : nil
        var policy = RejectionPolicy()
        policy.relaxPerDecibel = relax
        policy.cleanSNR = cleanSNR
        policy.maximumAbsorbedSpeech = maxAbsorbed
        policy.quietSpan = quietSpan
        let evaluate: (PCMAudio?, Double?) throws -> CommandEvaluation
        if buffered {
            let recognizer = try CommandRecognizer(model: model, settings: settings, rejection: rejection, threshold: threshold)
            recognizer.policy = policy
            evaluate = { try CommandEvaluation.run(set, recognizer: recognizer, noise: $0, snr: $1, expectNothing: falseAcceptance) }
        } else {
            let decoder = try StreamingCommandDecoder(model: model, settings: settings, rejection: rejection, threshold: threshold)
            decoder.policy = policy
            evaluate = {
                try CommandEvaluation.run(set, listening: RecordedUtterances(), decoder: decoder, noise: $0, snr: $1,
                                          expectNothing: falseAcceptance)
            }
        }
        let noise = try PCMAudio.read(sharedData("noise/kitchen.wav"))
        for snr in snrs {
            let level = snr == "clean" ? nil : Double(snr)
            if snr != "clean" && level == nil { throw ValidationError("--snr \(snr): expected a number or 'clean'") }
            let e = try evaluate(level == nil ? nil : noise, level)
            let label = falseAcceptance ? "false-accept" : "accuracy"
            let value = falseAcceptance ? 1 - e.accuracy : e.accuracy
            emit(String(format: "snr=%@ %@=%.1f%% (%d/%d) rtf=%.3f", snr, label, value * 100, falseAcceptance ? e.total - e.understood : e.understood, e.total, e.realTimeFactor))
            if verbose { for f in e.failures { emit("  \(f.file): \"\(f.transcript)\" \(f.reason)") } }
            for (name, values) in [("confidence", e.confidences), ("leftover speech (quiet-weighted)", e.absorbed)] {
                let sorted = values.sorted()
                guard !sorted.isEmpty else { continue }
                emit("  \(name) percentiles 0/1/2/5/10/50/90/95/98/99/100:", [0, 0.01, 0.02, 0.05, 0.1, 0.5, 0.9, 0.95, 0.98, 0.99, 1].map {
                    String(format: "%.3f", sorted[min(sorted.count - 1, Int($0 * Double(sorted.count)))])
                }.joined(separator: " "))
            }
        }
        emit(String(format: "peak-memory=%.1fMiB", peakMemoryMiB() ?? -1))
    }
}

enum BenchGrammars {
    /// A soup-ordering grammar the coffee recordings must not trigger.
    static var soup: PhraseModel { (try? EvaluationGrammars.soup()) ?? PhraseModel() }
}

/// Wake word miss rate on the wake-computer recordings against false alarms
/// per hour on speech without it (coffee recordings, looped with kitchen noise).
struct SpeechWake: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "speech-wake", abstract: "Wake word miss rate vs false alarms per hour.")

    @Option(help: "Wake phrase.")
    var wake = "computer"
    @Option(name: .customLong("sensitivity"), parsing: .upToNextOption, help: "Sensitivities to sweep (0...1).")
    var sensitivities: [Double] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    @Option(help: "Passes over the coffee recordings for the negative set (each pass at another noise level).")
    var passes: Int = 4
    @Option(help: "Stage-1 keyword threshold.")
    var candidateThreshold = WakeDetector.candidateThreshold
    @Flag(help: "Print every positive's best and every negative candidate's stage-2 score.")
    var verbose = false
    @Option(name: .customLong("set"), help: "Decoder setting override name=value (repeatable).")
    var overrides: [String] = []
    @Option(help: "Mix the positives with kitchen noise at this SNR (dB).")
    var positiveSNR: Double?
    @Option(parsing: .upToNextOption, help: "Only print stage 2's decodes of these whole recordings.")
    var trace: [String] = []

    func run() throws {
        if !trace.isEmpty {
            let detector = try WakeDetector(mode: .named(wake, heyOptional: true), settings: decoderSettings(overrides))
            for file in trace {
                emit(file, try detector.traceVerification(PCMAudio.read(URL(fileURLWithPath: file)).samples))
            }
            return
        }
        let positives = try FileManager.default.contentsOfDirectory(at: sharedData("wake-computer/clean"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "wav" }.sorted { $0.path < $1.path }
        let coffee = try FileManager.default.contentsOfDirectory(at: sharedData("coffee-maker/clean"), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "wav" }.sorted { $0.path < $1.path }
        let noise = try PCMAudio.read(sharedData("noise/kitchen.wav"))
        let snrs: [Double?] = [nil, 20, 10, 5, 15, 25]
        // Negative stream: every coffee recording, each pass at another SNR.
        var negative: [Int16] = []
        var starts: [(sample: Int, name: String)] = []
        for pass in 0..<passes {
            for (i, file) in coffee.enumerated() {
                var audio = try PCMAudio.read(file)
                if let snr = snrs[pass % snrs.count] { audio = audio.mixed(with: noise, snr: snr, seed: UInt64(pass * 1000 + i)) }
                starts.append((negative.count, "pass\(pass)/" + file.lastPathComponent))
                negative += audio.samples
            }
        }
        let hours = Double(negative.count) / 16_000 / 3600
        let positiveAudio = try positives.enumerated().map { i, file in
            let audio = try PCMAudio.read(file)
            return positiveSNR.map { audio.mixed(with: noise, snr: $0, seed: UInt64(90_000 + i)) } ?? audio
        }
        emit(String(format: "negative speech: %.2f h; positives: %d recordings", hours, positives.count))
        let mode: WakeMode = .named(wake, heyOptional: true)
        // Stage 1 does not depend on the sensitivity (it only moves the
        // stage-2 threshold), so every candidate is scored once and the
        // sweep counts those at or above each threshold: the same decisions
        // `WakeDetector.process` makes at that sensitivity.
        let detector = try WakeDetector(mode: mode, sensitivity: 0.5, settings: decoderSettings(overrides),
                                        candidateThreshold: candidateThreshold)
        var positiveBest: [Double] = []
        var noCandidate = 0
        for (file, audio) in zip(positives, positiveAudio) {
            // Half a second of silence either side, as in a stream.
            let padded = PCMAudio(samples: [Int16](repeating: 0, count: 8000) + audio.samples + [Int16](repeating: 0, count: 8000))
            let candidates = try detector.scoredCandidates(in: padded)
            if candidates.isEmpty { noCandidate += 1 }
            positiveBest.append(candidates.map(\.score).max() ?? -.infinity)
            if verbose {
                emit(String(format: "positive %@ candidates=%d best=%.2f at %@", file.lastPathComponent, candidates.count,
                            positiveBest.last!, candidates.map { String(format: "%.2f:%.2f", $0.time, $0.score) }.joined(separator: ",")))
            }
        }
        guard passes > 0 else {
            emit("positive scores: " + positiveBest.sorted().map { String(format: "%.2f", $0) }.joined(separator: " "))
            for s in sensitivities {
                let t = WakeDetector.verificationThreshold(sensitivity: s)
                let misses = positiveBest.filter { $0 < t }.count
                emit(String(format: "sensitivity=%.2f stage2-threshold=%.2f miss=%.1f%% (%d/%d)", s, t,
                            Double(misses) * 100 / Double(positives.count), misses, positives.count))
            }
            return
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let negativeCandidates = try detector.scoredCandidates(in: PCMAudio(samples: negative))
        let negativeScores = negativeCandidates.map(\.score)

        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let stage1Misses = noCandidate
        emit(String(format: "stage 1 (kws threshold %.0e): %d/%d positives without a candidate, %d negative candidates (%.1f/h); rtf=%.3f",
                     candidateThreshold, stage1Misses, positives.count, negativeScores.count,
                     Double(negativeScores.count) / hours, seconds / (hours * 3600)))
        if verbose {
            emit("positive scores: " + positiveBest.sorted().map { String(format: "%.2f", $0) }.joined(separator: " "))
            for c in negativeCandidates.sorted(by: { $0.score > $1.score }).prefix(12) {
                let sample = Int(c.time * 16_000)
                let file = starts.last { $0.sample <= sample } ?? (0, "?")
                emit(String(format: "negative %.2f at %@ +%.2fs", c.score, file.name, Double(sample - file.sample) / 16_000))
            }
            emit("negative scores: " + negativeScores.sorted().map { String(format: "%.2f", $0) }.joined(separator: " "))
        }
        // The operating point the target names: at most 0.5 false alarms per
        // hour, i.e. the threshold just above the best-scoring negatives
        // allowed to pass.
        let allowed = Int((0.5 * hours).rounded(.down))
        let sortedNegatives = negativeScores.sorted(by: >)
        let bar = allowed < sortedNegatives.count ? sortedNegatives[allowed] : -.infinity
        let missesAtBar = positiveBest.filter { $0 <= bar }.count
        emit(String(format: "at <=0.5 false alarms/h (%d allowed): threshold above %.2f, miss=%.1f%% (%d/%d)",
                    allowed, bar, Double(missesAtBar) * 100 / Double(positives.count), missesAtBar, positives.count))
        for s in sensitivities {
            let t = WakeDetector.verificationThreshold(sensitivity: s)
            let misses = positiveBest.filter { $0 < t }.count
            let alarms = negativeScores.filter { $0 >= t }.count
            emit(String(format: "sensitivity=%.2f stage2-threshold=%.2f miss=%.1f%% (%d/%d) false-alarms/h=%.2f (%d)",
                         s, t, Double(misses) * 100 / Double(positives.count), misses, positives.count,
                         Double(alarms) / hours, alarms))
        }
    }
}

/// Time from the request to the first audio chunk of espeak-ng, and the
/// synthesis real-time factor, for typical device lines.
struct SpeechSynthesis: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "speech-synthesis", abstract: "Time to first audio of espeak-ng.")
    @Option(help: "Repetitions per line.")
    var repeats = 5

    func run() throws {
        let lines = [
            "Your twelve ounce latte is ready.",
            "That will be $4.50. Your coffee will be ready in 10 min.",
            "Which soup would you like? Clam chowder, tomato, or minestrone?",
            "Okay, I set a timer for 7:30.",
        ]
        let synth = try SpeechSynthesizer()
        _ = try synth.render16k("warm up")
        var firsts: [Double] = []
        var rtfs: [Double] = []
        let rate = Double(try synth.sampleRate)
        for line in lines {
            for _ in 0..<repeats {
                let start = DispatchTime.now().uptimeNanoseconds
                var first: UInt64?
                var samples = 0
                try synth.speak(line) { chunk in
                    if first == nil { first = DispatchTime.now().uptimeNanoseconds }
                    samples += chunk.count
                    return true
                }
                let end = DispatchTime.now().uptimeNanoseconds
                firsts.append(Double((first ?? end) - start) / 1e6)
                rtfs.append(Double(end - start) / 1e9 / (Double(samples) / rate))
            }
        }
        func median(_ x: [Double]) -> Double { x.sorted()[x.count / 2] }
        emit(String(format: "first-audio median=%.1fms max=%.1fms synthesis-rtf median=%.3f (%d runs)",
                     median(firsts), firsts.max() ?? 0, median(rtfs), firsts.count))
    }
}
