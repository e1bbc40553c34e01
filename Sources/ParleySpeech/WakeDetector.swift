import Foundation

/// How the device is woken (docs/spec.md §3).
public enum WakeMode: Sendable, Hashable {
    /// "Hey <name>", or just "<name>" when `heyOptional`.
    case named(String, heyOptional: Bool)
    /// "Hey" followed at once by a known phrase: the detector spots "hey"
    /// and the command stage confirms the phrase that follows.
    case direct
}

/// Always-on wake word detection on a continuous 16 kHz stream, in two
/// stages (named mode):
/// 1. keyword spotting (PocketSphinx keyphrase search, ps_set_kws) at a fixed,
///    permissive threshold (`candidateThreshold`) that misses little and
///    proposes many candidates;
/// 2. each candidate is verified on the last `WakeVerifier.windowSeconds` of
///    buffered audio plus `tailSeconds` after it (`WakeVerifier`: phrase
///    grammar vs phone loop on the same frames, log-likelihood ratio of the
///    two best paths in nats) against `verificationThreshold(sensitivity:)`.
/// Sensitivity therefore only moves the stage-2 threshold. Direct mode ("hey"
/// alone) is a single stage: the kws threshold follows the sensitivity.
/// Feed frames as they arrive; detections come back as stream times in
/// seconds. Owns its decoder; use from one thread.
public final class WakeDetector {
    public let mode: WakeMode
    /// 0 (fewest false alarms) ... 1 (fewest misses).
    public let sensitivity: Double
    let decoder: SphinxDecoder
    private let verifier: WakeVerifier?
    private var samplesSeen = 0
    private var utteranceStart = 0
    private var inUtterance = false
    /// The most recent audio, for stage 2.
    private var history: [Int16] = []
    private let historySamples = Int((WakeVerifier.windowSeconds + WakeVerifier.tailSeconds) * Double(PCMAudio.sampleRate))
    private let tailSamples = Int(WakeVerifier.tailSeconds * Double(PCMAudio.sampleRate))
    /// A stage-1 candidate waiting for its tail audio: its stream time and
    /// the sample count at which it is verified.
    private var pending: (time: Double, verifyAt: Int)?
    /// Restart the keyword search this often, so its internal state stays bounded.
    private let restartSamples = 16_000 * 30
    /// Stage-1 candidates so far, verified or not (`WakeUtterance.proposed`:
    /// named mode's command decoders wait for one).
    public private(set) var proposals = 0

    /// Keyword threshold for a sensitivity in single-stage (direct) mode:
    /// 1e-45 at 1 down to 1e-5 at 0.
    public static func threshold(sensitivity: Double) -> Double {
        pow(10, -(5 + 40 * min(1, max(0, sensitivity))))
    }

    /// Stage-1 keyword threshold of the two-stage (named) mode: permissive
    /// enough that every development positive gives a candidate (1e-40
    /// missed 10 of 80), about 600 candidates per hour of other speech.
    public static let candidateThreshold = 1e-60

    /// Stage-2 threshold (minimum log-likelihood ratio, in nats, of the best
    /// path with the wake phrase to the best path of phones alone) for a
    /// sensitivity: linear from `verificationRange.upperBound` at 0 to
    /// `.lowerBound` at 1. The default 0.5 gives 19 nats: the threshold the
    /// cross-validated tuning of training/bin/eval-wake-cv.sh picks for at most
    /// 0.5 false alarms per hour (18.7 on all five folds; on held-out folds
    /// the same tuning gave 10% misses at 0.78 false alarms/h, where 0, the
    /// previous default, gave 1.2% misses at 8.9/h). 80 nats from 0 to 1 as
    /// before.
    public static func verificationThreshold(sensitivity: Double) -> Double {
        let s = min(1, max(0, sensitivity))
        return verificationRange.upperBound - s * (verificationRange.upperBound - verificationRange.lowerBound)
    }
    public static let verificationRange = -21.0 ... 59.0

    /// The phrases of named mode: "hey <name>", and the name alone when
    /// "hey" is optional; the name's words are `WakeGrammar`'s, so what is
    /// listened for is what the command grammars and the stripping expect.
    public static func keyphrases(name: String, heyOptional: Bool) -> [[String]] {
        let words = WakeGrammar.nameWords(name)
        return heyOptional ? [["hey"] + words, words] : [["hey"] + words]
    }

    /// `candidateThreshold` overrides the stage-1 threshold (benchmarks).
    public init(mode: WakeMode, sensitivity: Double = 0.5, settings: DecoderSettings = .wake(),
                candidateThreshold: Double = WakeDetector.candidateThreshold) throws {
        guard (0...1).contains(sensitivity) else {
            throw SpeechError.badSetting(name: "sensitivity", value: "\(sensitivity)", expected: "a number from 0 to 1")
        }
        self.mode = mode
        self.sensitivity = sensitivity
        var lines: [(phrase: String, threshold: Double)]
        switch mode {
        case .named(let name, let heyOptional):
            let phrases = Self.keyphrases(name: name, heyOptional: heyOptional)
            guard phrases.allSatisfy({ !$0.isEmpty }), phrases[0].count > 1 else {
                throw SpeechError.badSetting(name: "wake name", value: name, expected: "at least one word")
            }
            lines = phrases.map { ($0.joined(separator: " "), candidateThreshold) }
            verifier = WakeVerifier(phrases: phrases)
        case .direct:
            lines = [("hey", Self.threshold(sensitivity: sensitivity))]
            verifier = nil
        }
        var s = settings
        s.keywordThreshold = lines[0].threshold
        // Stage 2's thresholds were tuned on the model's own scores.
        s.room = nil
        var words = Set(lines.flatMap { $0.phrase.split(separator: " ").map(String.init) })
        if let verifier { words.formUnion(verifier.words) }
        decoder = try SphinxDecoder(settings: s, words: words)
        try decoder.setKeywords(name: "wake", lines: lines)
        try verifier?.register(on: decoder)
        try decoder.use("wake")
    }

    /// Processes frames; returns the stream times (seconds, end of the wake
    /// phrase) of any detections in them.
    public func process(_ frames: [Int16]) throws -> [Double] {
        try processScored(frames).filter { $0.score >= Self.verificationThreshold(sensitivity: sensitivity) }.map(\.time)
    }

    /// Stage 1 candidates in `frames` with their stage-2 scores (+infinity in
    /// single-stage mode). `process` keeps those at or above the threshold.
    public func processScored(_ frames: [Int16]) throws -> [(time: Double, score: Double)] {
        try processCandidates(frames).map { ($0.time, $0.score) }
    }

    /// `processScored` with stage 2's placement of the phrase.
    public func processCandidates(_ frames: [Int16]) throws -> [WakeCandidate] {
        if !inUtterance {
            try decoder.use("wake")
            try decoder.startUtterance()
            inUtterance = true
            utteranceStart = samplesSeen
        }
        try decoder.process(frames)
        samplesSeen += frames.count
        if verifier != nil {
            history += frames
            if history.count > historySamples { history.removeFirst(history.count - historySamples) }
        }
        var candidates: [WakeCandidate] = []
        if decoder.hypothesis() != nil {
            // The end of these frames: the keyword search reports a detection
            // as soon as the phrase ends, so this is at most one frame late.
            // (Its segment frames are not reliable across restarts.)
            let time = Double(samplesSeen) / Double(PCMAudio.sampleRate)
            proposals += 1
            try reset()
            if verifier == nil {
                candidates.append(WakeCandidate(time: time, score: .infinity, likelihoodRatio: .infinity, phraseFrames: 0, withHey: false))
            } else if pending == nil {
                // Stage 2 waits for a little audio after the candidate: the
                // search may fire before the last phone has ended.
                pending = (time, samplesSeen + tailSamples)
            }
        } else if samplesSeen - utteranceStart > restartSamples {
            try reset()
        }
        if let pending, samplesSeen >= pending.verifyAt {
            candidates.append(try verifyPending())
        }
        return candidates
    }

    /// Scores the pending candidate on the buffered audio.
    private func verifyPending() throws -> WakeCandidate {
        guard let pending, let verifier else {
            return WakeCandidate(time: 0, score: -.infinity, likelihoodRatio: -.infinity, phraseFrames: 0, withHey: false)
        }
        self.pending = nil
        try reset()
        let v = try verifier.verify(history, on: decoder)
        return WakeCandidate(time: pending.time, score: v.score, likelihoodRatio: v.likelihoodRatio,
                             phraseFrames: v.phraseFrames, withHey: v.withHey, evidence: v.evidence)
    }

    /// Stage 2's decodes of a whole window, as text (benchmarks' --trace).
    public func traceVerification(_ window: [Int16]) throws -> String {
        guard let verifier else { return "single stage" }
        try reset()
        return try verifier.trace(window, on: decoder)
    }

    /// Ends the current search utterance; the next frames start afresh.
    public func reset() throws {
        if inUtterance { try decoder.endUtterance() }
        inUtterance = false
    }

    /// Streams a whole recording in 100 ms frames; times are seconds from
    /// the start of the recording.
    public func detections(in audio: PCMAudio) throws -> [Double] {
        try scoredCandidates(in: audio).filter { $0.score >= Self.verificationThreshold(sensitivity: sensitivity) }.map(\.time)
    }

    /// Every stage-1 candidate of a whole recording with its stage-2 score
    /// (for sweeping the sensitivity in one pass: the candidates do not
    /// depend on it).
    public func scoredCandidates(in audio: PCMAudio) throws -> [(time: Double, score: Double)] {
        try candidates(in: audio).map { ($0.time, $0.score) }
    }

    /// `scoredCandidates` with stage 2's placement of the phrase.
    public func candidates(in audio: PCMAudio) throws -> [WakeCandidate] {
        try reset()
        history.removeAll()
        pending = nil
        let origin = Double(samplesSeen) / Double(PCMAudio.sampleRate)
        var result: [WakeCandidate] = []
        var index = 0
        while index < audio.samples.count {
            let end = min(audio.samples.count, index + 1600)
            result += try processCandidates(Array(audio.samples[index..<end]))
            index = end
        }
        if pending != nil { result.append(try verifyPending()) }
        try reset()
        history.removeAll()
        return result.map { var c = $0; c.time -= origin; return c }
    }
}

/// A stage-1 candidate of the wake detector with its stage-2 verification.
public struct WakeCandidate: Sendable, Equatable {
    /// Stream time in seconds (end of the 100 ms block stage 1 fired in).
    public var time: Double
    /// Stage-2 score in nats, compared with the threshold (+infinity in
    /// single-stage mode): the likelihood ratio less the duration prior.
    public var score: Double
    /// Stage 2's log-likelihood ratio alone, in nats.
    public var likelihoodRatio: Double
    /// 10 ms frames the phrase's own words cover in stage 2's best path.
    public var phraseFrames: Int
    /// Whether stage 2's best path holds the leading "hey".
    public var withHey: Bool
    /// Stage 2's evidence beyond the ratio (`.none` in single-stage mode).
    public var evidence: WakeEvidence = .none
}
