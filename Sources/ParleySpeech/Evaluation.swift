import Foundation
import ParleyCore

/// Labelled command recordings (the coffee-maker benchmark's labels.json):
/// file name → intent and slots. Leading spaces in slot values are stripped.
public struct LabelledSet: Sendable {
    public struct Item: Sendable {
        public var file: URL
        public var intent: String
        public var slots: [String: String]
    }
    public var items: [Item]

    public static func load(labels: URL, folder: URL) throws -> LabelledSet {
        guard let data = FileManager.default.contents(atPath: labels.path),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SpeechError.badFile(path: labels.path, reason: "expected a JSON object of file name to {intent, slots}")
        }
        var items: [Item] = []
        for name in json.keys.sorted() {
            guard let entry = json[name] as? [String: Any], let intent = entry["intent"] as? String else {
                throw SpeechError.badFile(path: labels.path, reason: "entry \(name): expected {\"intent\": ..., \"slots\": {...}}")
            }
            let raw = entry["slots"] as? [String: String] ?? [:]
            let slots = raw.mapValues { $0.trimmingCharacters(in: .whitespaces) }
            items.append(Item(file: folder.appendingPathComponent(name), intent: intent, slots: slots))
        }
        return LabelledSet(items: items)
    }
}

/// Grammars of the evaluations.
public enum EvaluationGrammars {
    /// A soup-ordering app the coffee recordings must not trigger (false
    /// acceptance: `parley-bench speech-coffee --false-acceptance`).
    public static let soupYAML = """
    context:
      expressions:
        orderSoup:
          - "[order, get me, I want, I'd like] [a, an] (bowl of) $soup:soup"
          - "[order, get me, I want, I'd like] $quantity:quantity [bowls of, cups of] $soup:soup"
          - "what soups do you have"
      slots:
        soup: ["clam chowder", "tomato soup", "minestrone", "chicken noodle soup", "lentil soup"]
        quantity: ["one", "two", "three", "four"]
    """

    public static func soup() throws -> PhraseModel { try RhinoContext.parse(soupYAML, app: "Soup Chef") }
}

/// Scoring as published for the speech-to-intent benchmark: right intent
/// and every labelled slot exact; extra slots are not penalised; no result
/// is a failure.
public func isUnderstood(intent expected: String, slots labelled: [String: String], result: PhraseMatch?) -> Bool {
    guard let result, case .intent(_, let intent, _) = result.target, intent == expected else { return false }
    return labelled.allSatisfy { result.slots[$0.key] == $0.value }
}

/// One pass of the command stage over a labelled set.
public struct CommandEvaluation: Sendable {
    public var total = 0
    public var understood = 0
    public var audioSeconds = 0.0
    public var decodeSeconds = 0.0
    public var failures: [(file: String, transcript: String, reason: String)] = []
    /// Rejection confidence of every recording (see `CommandResult.confidence`).
    public var confidences: [Double] = []
    /// Leftover speech of every recording, weighted as the policy weighs it
    /// (`RejectionEvidence.absorbedSpeech` × `RejectionPolicy.quietWeight`).
    public var absorbed: [Double] = []
    public var accuracy: Double { total == 0 ? 0 : Double(understood) / Double(total) }
    public var realTimeFactor: Double { audioSeconds == 0 ? 0 : decodeSeconds / audioSeconds }

    /// Runs `recognizer` (the buffered decoder) on every item, optionally
    /// mixed with noise at `snr` dB.
    public static func run(_ set: LabelledSet, recognizer: CommandRecognizer, noise: PCMAudio? = nil, snr: Double? = nil,
                           expectNothing: Bool = false) throws -> CommandEvaluation {
        try run(set, policy: recognizer.policy, noise: noise, snr: snr, expectNothing: expectNothing) {
            try recognizer.recognize($0)
        }
    }

    /// Every item through the daemon's listening path: `utterances` (the
    /// `ListeningDriver`) feeding `decoder` while the recording plays, the
    /// result `parley understand` reports.
    public static func run(_ set: LabelledSet, listening utterances: RecordedUtterances, decoder: StreamingCommandDecoder,
                           noise: PCMAudio? = nil, snr: Double? = nil, expectNothing: Bool = false) throws -> CommandEvaluation {
        try run(set, policy: decoder.policy, noise: noise, snr: snr, expectNothing: expectNothing) {
            try utterances.understand($0, decoder: decoder).result ?? CommandResult(transcript: "", confidence: 0, match: nil, rejection: "no speech")
        }
    }

    /// `recognize` on every item; `policy` weighs the leftover speech.
    static func run(_ set: LabelledSet, policy: RejectionPolicy, noise: PCMAudio?, snr: Double?, expectNothing: Bool,
                    recognize: ([Int16]) throws -> CommandResult) throws -> CommandEvaluation {
        var e = CommandEvaluation()
        for (index, item) in set.items.enumerated() {
            var audio = try PCMAudio.read(item.file)
            if let noise, let snr { audio = audio.mixed(with: noise, snr: snr, seed: UInt64(index) &+ 0x5EED) }
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try recognize(audio.samples)
            e.decodeSeconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            e.audioSeconds += audio.seconds
            e.total += 1
            e.confidences.append(result.confidence)
            if let evidence = result.evidence {
                e.absorbed.append(evidence.absorbedSpeech * policy.quietWeight(snr: evidence.snr))
            }
            let ok = expectNothing ? result.match == nil : isUnderstood(intent: item.intent, slots: item.slots, result: result.match)
            if ok { e.understood += 1 } else {
                e.failures.append((item.file.lastPathComponent, result.transcript, (result.rejection ?? "wrong: \(result.match?.slots ?? [:])") + String(format: " conf=%.3f", result.confidence)))
            }
        }
        return e
    }
}

/// Peak resident memory of this process (VmHWM from /proc/self/status), in MiB.
public func peakMemoryMiB() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kb / 1024
    }
    return nil
}
