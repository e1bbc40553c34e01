import Foundation

/// What rejection measured on one utterance, from the command path's and the
/// free phone loop's segmentations of the same frames.
public struct RejectionEvidence: Sendable, Equatable {
    /// The command path's acoustic log-likelihood relative to the phone
    /// loop, per 10 ms frame (natural log): around 0 for real commands,
    /// strongly negative for speech forced into the grammar. Counts the
    /// recognised words and the silence/noise stretches that are themselves
    /// below `threshold` (speech the command path could only call silence).
    public var ratio: Double
    /// Frames the command path calls silence or noise while the phone loop
    /// decodes phones there, per frame of recognised words: speech the
    /// grammar could not use. Near 0 for real commands in quiet.
    public var absorbedSpeech: Double
    /// The utterance's estimated SNR (dB, `RejectionPolicy.estimatedSNR`).
    public var snr: Double
    /// The ratio threshold applied (the base threshold relaxed for noise).
    public var threshold: Double
    /// The lowest per-frame ratio of any one recognised word: a slot value
    /// misheard in noise ("medium" for "large") drags its own word down
    /// while the utterance's ratio, spread over every word, hardly moves.
    /// 0 when no word was scored. What the ask rule reads beside `ratio`.
    public var weakestWord: Double = 0
    /// Each recognised word (fillers and silence left out), in order: its
    /// own ratio (as `weakestWord`) and its lattice posterior. Which word
    /// is unsure, so that one slot can be asked back rather than the
    /// whole command (`AskRule.doubted`).
    public var words: [WordEvidence] = []
    /// The SNR of the audio before the neural front end
    /// (`DenoisedCommandDecoder`), estimated as `snr` is; nil when none ran.
    /// `snr` is then measured on the denoised audio, whose noise floor the
    /// network has taken away: in kitchen noise at 6 dB nine orders in ten
    /// read 54 dB or more there, so it no longer says how noisy the room was.
    public var inputSNR: Double? = nil
    /// The same utterance decoded again without the neural front end gave
    /// the same command (`DenoisedCommandDecoder.corroborating`): done only
    /// for a command the ask rule would ask back, which then does not
    /// (`AskRule.asks`). Two decodes of differently noisy audio agreeing on
    /// the intent and every slot value is evidence the ratios cannot give:
    /// of the development orders at 6 dB that agreed, 67 of 68 were right.
    public var corroborated = false

    /// One recognised word's evidence.
    public struct WordEvidence: Sendable, Equatable {
        public var word: String
        /// The command path's log-likelihood over the phone loop's, per frame, on this word's frames.
        public var ratio: Double
        /// Its lattice posterior (`SphinxDecoder.wordPosteriors`), nil when no lattice was kept.
        public var posterior: Double?

        public init(word: String, ratio: Double, posterior: Double? = nil) {
            self.word = word
            self.ratio = ratio
            self.posterior = posterior
        }
    }

    public init(ratio: Double, absorbedSpeech: Double, snr: Double, threshold: Double, weakestWord: Double = 0) {
        self.ratio = ratio
        self.absorbedSpeech = absorbedSpeech
        self.snr = snr
        self.threshold = threshold
        self.weakestWord = weakestWord
    }

    /// Why the policy rejects this evidence, or nil when it passes.
    public func rejection(policy: RejectionPolicy) -> String? {
        if ratio < threshold {
            return String(format: "confidence %.3f below %.3f", ratio, threshold)
        }
        let weighted = absorbedSpeech * policy.quietWeight(snr: snr)
        if weighted > policy.maximumAbsorbedSpeech {
            return String(format: "speech outside the command: %.2f of its length (at %.0f dB)", absorbedSpeech, snr)
        }
        return nil
    }
}

/// The command stage's decision, shared by `CommandRecognizer` (buffered)
/// and `StreamingCommandDecoder` (streamed): rejection on the two searches'
/// segmentations, then the phrase match.
enum CommandScoring {
    /// Scores the command path against the phone loop (see `RejectionEvidence`).
    /// `(NULL)` segments (the searches' empty transitions, one frame wide,
    /// no acoustic score) are skipped: spread over the frames they would
    /// hide a frame of the real phone or word scored there.
    /// `posteriors`: each of `words`' lattice posterior, in the same order
    /// (`SphinxDecoder.wordPosteriors`), when the search kept a lattice.
    static func evidence(_ words: [SphinxDecoder.Segment], loop: [SphinxDecoder.Segment],
                         threshold: Double, snr: Double, posteriors: [Double?]? = nil) -> RejectionEvidence {
        let frameCount = ((words + loop).map(\.endFrame).max() ?? -1) + 1
        let command = perFrame(words, count: frameCount)
        let reference = perFrame(loop, count: frameCount)
        var difference = 0.0
        var frames = 0
        var wordFrames = 0
        var weakest = Double.infinity
        var scored: [RejectionEvidence.WordEvidence] = []
        for (index, w) in words.enumerated() where isScored(w, count: frameCount) {
            let span = w.startFrame...w.endFrame
            let d = span.reduce(0.0) { $0 + command[$1].score - reference[$1].score }
            if !w.isFiller {
                wordFrames += span.count
                weakest = min(weakest, d / Double(span.count))
                let posterior = posteriors.flatMap { index < $0.count ? $0[index] : nil }
                scored.append(.init(word: SphinxDecoder.baseWord(w.word), ratio: d / Double(span.count), posterior: posterior))
            } else if d / Double(span.count) >= threshold {
                continue  // silence or noise that the loop fits no better
            }
            difference += d
            frames += span.count
        }
        var absorbed = 0
        for f in 0..<frameCount where !command[f].speech && reference[f].speech { absorbed += 1 }
        var evidence = RejectionEvidence(ratio: frames == 0 ? 0 : difference / Double(frames),
                                         absorbedSpeech: wordFrames == 0 ? 0 : Double(absorbed) / Double(wordFrames),
                                         snr: snr, threshold: threshold, weakestWord: weakest.isFinite ? weakest : 0)
        evidence.words = scored
        return evidence
    }

    private static func isScored(_ s: SphinxDecoder.Segment, count: Int) -> Bool {
        s.word != "(NULL)" && s.startFrame >= 0 && s.endFrame >= s.startFrame && s.endFrame < count
    }

    /// Each frame's share of its segment's acoustic score, and whether the
    /// segment is speech (a word or a loop phone) rather than silence/noise.
    private static func perFrame(_ segments: [SphinxDecoder.Segment], count: Int) -> [(score: Double, speech: Bool)] {
        var frames = [(score: Double, speech: Bool)](repeating: (0, false), count: count)
        for s in segments where isScored(s, count: count) {
            let share = s.acoustic / Double(s.endFrame - s.startFrame + 1)
            for f in s.startFrame...s.endFrame { frames[f] = (share, !s.isFiller) }
        }
        return frames
    }

    /// The command stage's result: nothing recognised, rejected, no rule, or a match.
    /// `loopWords` is nil when rejection is off.
    static func result(_ hyp: Hypothesis?, commandWords: [SphinxDecoder.Segment], loopWords: [SphinxDecoder.Segment]?,
                       samples: [Int16], threshold base: Double, policy: RejectionPolicy,
                       matcher: PhraseMatcher, posteriors: [Double?]? = nil) -> CommandResult {
        guard let hyp else {
            return CommandResult(transcript: "", confidence: -.infinity, match: nil, rejection: "nothing recognised")
        }
        var confidence = 0.0
        var evidence: RejectionEvidence?
        if let loopWords {
            let snr = RejectionPolicy.estimatedSNR(samples)
            let measured = Self.evidence(commandWords, loop: loopWords, threshold: policy.threshold(base: base, snr: snr), snr: snr,
                                         posteriors: posteriors)
            confidence = measured.ratio
            evidence = measured
            if let reason = measured.rejection(policy: policy) {
                return CommandResult(transcript: hyp.transcript, confidence: confidence, match: nil, rejection: reason, evidence: evidence)
            }
        }
        guard let match = matcher.match(hyp.words) else {
            return CommandResult(transcript: hyp.transcript, confidence: confidence, match: nil, rejection: "no rule matches", evidence: evidence)
        }
        return CommandResult(transcript: hyp.transcript, confidence: confidence, match: match, rejection: nil, evidence: evidence)
    }
}
