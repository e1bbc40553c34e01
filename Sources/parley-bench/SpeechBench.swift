import ArgumentParser
import Foundation
import ParleyCore
import ParleySpeech

/// Locates ../shared/data from the working directory (the package root).
func sharedData(_ path: String) -> URL {
    let root = ProcessInfo.processInfo.environment["PARLEY_SHARED_DATA"] ?? "../shared/data"
    return URL(fileURLWithPath: root).appendingPathComponent(path)
}

func decoderSettings(_ overrides: [String]) throws -> DecoderSettings {
    var s = DecoderSettings()
    for o in overrides { try s.apply(o) }
    return s
}

/// Command acceptance on the coffee-maker recordings, clean and in kitchen noise.
struct SpeechCoffee: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speech-coffee", abstract: "Coffee-maker command acceptance, RTF, memory, false acceptance.")

    @Option(name: .customLong("snr"), parsing: .upToNextOption, help: "SNRs in dB; 'clean' for no noise.")
    var snrs: [String] = ["clean"]
    @Option(name: .customLong("set"), help: "Decoder setting name=value (repeatable).")
    var settings: [String] = []
    @Option(help: "Garbage path prior probability (0 disables the garbage path).")
    var garbage: Double = 1
    @Option(help: "Garbage path cost per phone.")
    var phonePenalty: Double = 1
    @Option(help: "Rejection threshold: command-vs-phone-loop score per frame.")
    var threshold: Double = 0.2
    @Option(help: "Only the first N recordings.")
    var limit: Int?
    @Flag(help: "Run against a soup grammar and count recordings that produce an intent (false acceptance).")
    var falseAcceptance = false
    @Flag(help: "Print each failure.")
    var verbose = false

    func run() throws {
        let settings = try decoderSettings(settings)
        var set = try LabelledSet.load(labels: sharedData("coffee-maker/labels.json"), folder: sharedData("coffee-maker/clean"))
        if let limit { set.items = Array(set.items.prefix(limit)) }
        let model = falseAcceptance ? BenchGrammars.soup : try RhinoContext.load(sharedData("coffee-maker/grammar.yaml"), app: "Coffee Maker")
        let rejection = garbage > 0 ? RejectionModel(phonePenalty: phonePenalty) : nil
        let recognizer = try CommandRecognizer(model: model, settings: settings, rejection: rejection, threshold: threshold)
        let noise = try NoiseMixer(noise: WAVFile.read(sharedData("noise/kitchen.wav")))
        for snr in snrs {
            let level = snr == "clean" ? nil : Double(snr)
            if snr != "clean" && level == nil { throw ValidationError("--snr \(snr): expected a number or 'clean'") }
            let e = try CommandEvaluation.run(set, recognizer: recognizer, noise: level == nil ? nil : noise, snr: level,
                                              expectNothing: falseAcceptance)
            let label = falseAcceptance ? "false-accept" : "accuracy"
            let value = falseAcceptance ? 1 - e.accuracy : e.accuracy
            print(String(format: "snr=%@ %@=%.1f%% (%d/%d) rtf=%.3f", snr, label, value * 100, falseAcceptance ? e.total - e.understood : e.understood, e.total, e.realTimeFactor))
            if verbose { for f in e.failures { print("  \(f.file): \"\(f.transcript)\" \(f.reason)") } }
            let sorted = e.confidences.sorted()
            if !sorted.isEmpty {
                print("  confidence percentiles:", [0.01, 0.02, 0.05, 0.1, 0.5, 0.9, 0.95, 0.98, 0.99].map { String(format: "%.3f", sorted[min(sorted.count - 1, Int($0 * Double(sorted.count)))]) }.joined(separator: " "))
            }
        }
        print(String(format: "peak-memory=%.1fMiB", peakMemoryMiB() ?? -1))
    }
}

enum BenchGrammars {
    /// A soup-ordering grammar the coffee recordings must not trigger.
    static var soup: PhraseModel {
        (try? RhinoContext.parse("""
        context:
          expressions:
            orderSoup:
              - "[order, get me, I want, I'd like] [a, an] (bowl of) $soup:soup"
              - "[order, get me, I want, I'd like] $quantity:quantity [bowls of, cups of] $soup:soup"
              - "what soups do you have"
          slots:
            soup: ["clam chowder", "tomato soup", "minestrone", "chicken noodle soup", "lentil soup"]
            quantity: ["one", "two", "three", "four"]
        """, app: "Soup Chef")) ?? PhraseModel()
    }
}

struct SpeechWake: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "speech-wake", abstract: "Wake word miss rate vs false alarms per hour.")
    func run() throws { throw ValidationError("not yet") }
}

struct SpeechSynthesis: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "speech-synthesis", abstract: "Time to first audio of espeak-ng.")
    func run() throws { throw ValidationError("not yet") }
}
