import ArgumentParser
import Foundation
import ParleyApps
import ParleyCore

/// `parley-bench resolve`: phrase model compilation and text resolution with
/// every bundled app plus generated extra phrases.
struct ResolveBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Times compiling the phrase model and resolving transcripts (all bundled apps + generated phrases).")

    @Option(help: "Number of generated extra phrases registered.")
    var extraPhrases = 1000

    @Option(help: "Times each transcript is resolved per measurement.")
    var iterations = 200

    @Option(help: "Times the model is compiled.")
    var compileRuns = 30

    func validate() throws {
        guard extraPhrases >= 0, iterations > 0, compileRuns > 0 else {
            throw ValidationError("--extra-phrases must be >= 0, --iterations and --compile-runs > 0")
        }
    }

    static let lexicon = """
        apple river lamp garden window yellow music morning kitchen blanket pepper silver rocket forest
        candle pillow violet marble harbor meadow thunder copper pencil basket feather lantern orange
        cherry planet canyon island winter summer autumn spring shadow mirror ribbon button saddle
        ticket bottle jacket pocket rabbit turtle dragon falcon tiger monkey parrot dolphin salmon
        olive ginger walnut pretzel muffin waffle noodle pickle tomato carrot potato onion garlic
        lemon melon peach plum grape berry honey butter cheese bread toast bagel cookie donut
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)

    /// Deterministic extra phrases ("violet harbor lantern mode"), each a custom phrase.
    static func generatedPhrases(_ count: Int) -> [CustomPhrase] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        var seen = Set<String>()
        var phrases: [CustomPhrase] = []
        let targets: [(String, String)] = [("Timer", "TimeLeft"), ("Notes", "ReadNotes"), ("Timer", "CancelTimer")]
        while phrases.count < count {
            let length = 2 + next() % 3
            let phrase = (0..<length).map { _ in lexicon[next() % lexicon.count] }.joined(separator: " ") + " mode"
            guard seen.insert(phrase).inserted else { continue }
            let target = targets[phrases.count % targets.count]
            phrases.append(CustomPhrase(phrase: phrase, app: target.0, intent: target.1, parameters: [:], created: .distantPast))
        }
        return phrases
    }

    static func nanoseconds(_ work: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        work()
        return DispatchTime.now().uptimeNanoseconds - start
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    func run() throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        let extra = Self.generatedPhrases(extraPhrases)

        // Compilation: registry -> PhraseModel -> Resolver.
        var modelTimes: [Double] = [], resolverTimes: [Double] = [], totalTimes: [Double] = []
        var model = PhraseModel()
        var resolver = Resolver(model: model)
        for _ in 0..<compileRuns {
            let modelNs = Self.nanoseconds { model = PhraseCompiler.compile(registry, customPhrases: extra) }
            let resolverNs = Self.nanoseconds { resolver = Resolver(model: model) }
            modelTimes.append(Double(modelNs) / 1e6)
            resolverTimes.append(Double(resolverNs) / 1e6)
            totalTimes.append(Double(modelNs + resolverNs) / 1e6)
        }

        var transcripts = Self.transcripts
        for phrase in extra.prefix(20) { transcripts.append(("please " + phrase.phrase, true)) }
        let (perUtterance, correct) = Self.timeResolution(resolver, transcripts, iterations: iterations)

        print("phrase model: \(model.rules.count) rules, \(model.vocabularies.count) vocabularies, \(model.words.count) words (\(extraPhrases) generated extra phrases)")
        print(String(format: "compile PhraseModel: median %.2f ms", Self.median(modelTimes)))
        print(String(format: "compile Resolver:    median %.2f ms", Self.median(resolverTimes)))
        print(String(format: "compile total:       median %.2f ms (target < 50 ms), %d runs", Self.median(totalTimes), compileRuns))
        print(String(format: "resolve: median %.2f µs per utterance (target < 20 µs), p90 %.2f µs, max %.2f µs; %d transcripts x %d iterations",
                     Self.median(perUtterance), Self.percentile(perUtterance, 0.9), perUtterance.max() ?? 0, transcripts.count, iterations))
        print("resolve: \(correct)/\(transcripts.count) transcripts resolved or rejected as expected")
        if correct != transcripts.count { throw ExitCode(2) }
    }

    /// Per-transcript mean resolve time in µs, and how many were resolved or rejected as expected.
    static func timeResolution(_ resolver: Resolver, _ transcripts: [(text: String, expected: Bool)], iterations: Int) -> ([Double], Int) {
        var perUtterance: [Double] = []
        var correct = 0
        for transcript in transcripts {
            let understood = resolver.resolve(transcript.text) != nil
            if understood == transcript.expected { correct += 1 }
            var sink = 0
            let ns = nanoseconds {
                for _ in 0..<iterations { sink &+= resolver.resolve(transcript.text)?.values.count ?? 0 }
            }
            if sink < 0 { print(sink) }
            perUtterance.append(Double(ns) / Double(iterations) / 1000)
        }
        return (perUtterance, correct)
    }

    /// Templates, shortcut phrases with fillers, built-ins, out-of-grammar speech.
    static let transcripts: [(text: String, expected: Bool)] = [
        ("can I get a twelve ounce dark roast double shot americano with a bit of cream", true),
        ("I'd like a large light roast latte with a bit of soy milk and some sugar", true),
        ("give me an eight ounce triple shot iced mocha with lots of almond milk", true),
        ("brew a medium coffee", true),
        ("may I have a small medium roast single shot cappuccino with sweetener and whole milk", true),
        ("order a latte with barista", true),
        ("hey can you please order soup with soup chef for me", true),
        ("order clam chowder with soup chef", true),
        ("start a ten minute timer", true),
        ("could you set a timer for an hour and a half please", true),
        ("how much time is left on the timer", true),
        ("add a note with notes", true),
        ("what can I say", true),
        ("what can soup chef do", true),
        ("cancel", true),
        ("the weather in lisbon is lovely today", false),
        ("turn up the television volume", false),
        ("can I get a large", false),
        ("order a pizza with soup chef", false),
        ("so anyway I told him about the garden", false),
    ]
}

