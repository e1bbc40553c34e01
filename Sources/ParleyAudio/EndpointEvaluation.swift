import Foundation

/// The reference the endpointer is measured against: the "true speech
/// extent" of a clean recording is the span from the first to the last
/// 10 ms frame whose level is within `thresholdDB` (default 35 dB) of the
/// recording's loudest 10 ms frame, counting only runs of at least
/// `minimumRunFrames` (default 3, i.e. 30 ms) such frames, so an isolated
/// click of the microphone is not speech. Computed on the clean recording
/// and applied unchanged to its noisy mixes (same time alignment).
public enum SpeechExtent {
    public static let defaultThresholdDB = 35.0
    public static let defaultMinimumRunFrames = 3

    /// Sample range of speech, or nil for an all-silent recording.
    public static func of(_ samples: [Int16], sampleRate: Int = 16_000, thresholdDB: Double = defaultThresholdDB,
                          minimumRunFrames: Int = defaultMinimumRunFrames) -> Range<Int>? {
        let frame = sampleRate / 100
        let frames = samples.count / frame
        guard frames > 0 else { return nil }
        var levels = [Double](repeating: 0, count: frames)
        for f in 0..<frames {
            var energy = 0.0
            for s in samples[f * frame..<(f + 1) * frame] { energy += Double(s) * Double(s) }
            levels[f] = 10 * log10(energy / Double(frame) + 1)
        }
        let top = levels.max()!
        guard top > 0 else { return nil }
        var first: Int?
        var last = 0
        var run = 0
        for (index, level) in levels.enumerated() {
            run = level >= top - thresholdDB ? run + 1 : 0
            if run == minimumRunFrames {
                if first == nil { first = index - run + 1 }
            }
            if run >= minimumRunFrames { last = index }
        }
        guard let first else { return nil }
        return first * frame..<(last + 1) * frame
    }
}

/// Measures `Endpointer` on recordings, clean and mixed with noise.
public enum EndpointEvaluation {
    /// Outcome on one recording at one SNR.
    public struct Outcome: Sendable {
        public var segments: [(start: Int64, end: Int64, reportedAt: Int64)]
        public var truth: Range<Int>
        /// Exactly one segment, and it contains the whole true extent.
        public var oneSegmentWithAllSpeech: Bool
        /// Some segment contains the whole true extent (other segments allowed).
        public var someSegmentWithAllSpeech: Bool
        /// The first segment, started the listening path's decoder lead-in
        /// earlier, contains the whole true extent: what the decoder is fed
        /// first (later segments, a noise after the command, do not matter).
        public var firstUtteranceWithAllSpeech: Bool
        /// Seconds from the true end of speech to when the end was reported
        /// (for the segment containing the true end), nil if none.
        public var endDelaySeconds: Double?
    }

    /// Results for one condition (clean or an SNR).
    public struct Condition: Sendable {
        public var label: String
        public var recordings: Int
        public var oneSegmentShare: Double
        public var someSegmentShare: Double
        public var firstUtteranceShare: Double
        public var medianEndDelaySeconds: Double
        public var p90EndDelaySeconds: Double
    }

    /// Seconds of trailing audio appended to each recording (silence, or
    /// the continuing noise) so the endpointer can report the end even for
    /// recordings that stop right after the speech.
    public static let tailSeconds = 2.0

    /// Runs the endpointer over one recording (16 kHz mono) with `truth`.
    /// `leadInMilliseconds`: audio the listening path feeds its decoder
    /// before a segment's start (`UtteranceListening.decoderLeadInMilliseconds`,
    /// which ParleyAudio does not know), for `firstUtteranceWithAllSpeech`.
    public static func evaluate(_ samples: [Int16], truth: Range<Int>, configuration: EndpointerConfiguration,
                                leadInMilliseconds: Int = 0) -> Outcome {
        let endpointer = Endpointer(configuration: configuration)
        var segments: [(start: Int64, end: Int64, reportedAt: Int64)] = []
        var open: Int64?
        endpointer.process(samples) { event in
            switch event {
            case .speechStarted(let start, _): open = start
            case .speechEnded(let start, let end, let reportedAt):
                segments.append((start, end, reportedAt))
                open = nil
            case .speechPaused: break
            }
        }
        if let open {   // still open at the end of the input: close it there
            let end = Int64(samples.count)
            segments.append((open, end, end))
        }
        let rate = Double(configuration.sampleRate)
        let containing = segments.first { $0.start <= Int64(truth.lowerBound) && $0.end >= Int64(truth.upperBound) }
        let ending = segments.first { $0.start < Int64(truth.upperBound) && $0.end >= Int64(truth.upperBound) }
            ?? segments.last { $0.start < Int64(truth.upperBound) }
        let leadIn = Int64(leadInMilliseconds * configuration.sampleRate / 1000)
        let firstHoldsAll = segments.first.map {
            $0.start - leadIn <= Int64(truth.lowerBound) && $0.end >= Int64(truth.upperBound)
        } ?? false
        return Outcome(
            segments: segments, truth: truth,
            oneSegmentWithAllSpeech: segments.count == 1 && containing != nil,
            someSegmentWithAllSpeech: containing != nil,
            firstUtteranceWithAllSpeech: firstHoldsAll,
            endDelaySeconds: ending.map { Double($0.reportedAt - Int64(truth.upperBound)) / rate })
    }

    /// Clean recordings and their mixes with `noise` at each SNR. The noise
    /// slice for recording i is chosen with seed `seed + i` (the same slice at
    /// every SNR); the tail is silence for clean, continuing noise for mixes.
    public static func run(recordings: [URL], noise: URL, snrs: [Double], seed: UInt64 = 20_240_611,
                           configuration: EndpointerConfiguration, leadInMilliseconds: Int = 0) throws -> [Condition] {
        let all = try outcomes(recordings: recordings, noise: noise, snrs: snrs, seed: seed, configuration: configuration,
                               leadInMilliseconds: leadInMilliseconds)
        return (["clean"] + snrs.map { label(snr: $0) }).map { key in
            let list = all.filter { $0.condition == key }.map(\.outcome)
            let delays = list.compactMap(\.endDelaySeconds).sorted()
            func share(_ f: (Outcome) -> Bool) -> Double { list.isEmpty ? 0 : Double(list.filter(f).count) / Double(list.count) }
            return Condition(
                label: key, recordings: list.count,
                oneSegmentShare: share(\.oneSegmentWithAllSpeech), someSegmentShare: share(\.someSegmentWithAllSpeech),
                firstUtteranceShare: share(\.firstUtteranceWithAllSpeech),
                medianEndDelaySeconds: percentile(delays, 0.5), p90EndDelaySeconds: percentile(delays, 0.9))
        }
    }

    /// Each recording's outcome in each condition ("clean", "6 dB", …), in
    /// recording order (for per-recording analysis, e.g. cross-validation).
    public static func outcomes(recordings: [URL], noise: URL, snrs: [Double], seed: UInt64 = 20_240_611,
                                configuration: EndpointerConfiguration, leadInMilliseconds: Int = 0) throws
        -> [(recording: URL, condition: String, outcome: Outcome)] {
        let noiseSamples = try WAVFile.read(noise).samples
        var outcomes: [(recording: URL, condition: String, outcome: Outcome)] = []
        for (index, url) in recordings.enumerated() {
            let (clean, rate) = try WAVFile.read(url)
            guard rate == configuration.sampleRate else {
                throw AudioError.badFile(path: url.path, reason: "expected \(configuration.sampleRate) Hz, found \(rate) Hz")
            }
            guard let truth = SpeechExtent.of(clean, sampleRate: rate) else { continue }
            let padded = clean + [Int16](repeating: 0, count: Int(tailSeconds * Double(rate)))
            outcomes.append((url, "clean", evaluate(padded, truth: truth, configuration: configuration,
                                                    leadInMilliseconds: leadInMilliseconds)))
            for snr in snrs {
                let mixed = NoiseMixer.mix(speech: padded, noise: noiseSamples, snrDB: snr, seed: seed &+ UInt64(index))
                outcomes.append((url, label(snr: snr), evaluate(mixed, truth: truth, configuration: configuration,
                                                                leadInMilliseconds: leadInMilliseconds)))
            }
        }
        return outcomes
    }

    static func label(snr: Double) -> String { "\(Int(snr)) dB" }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
        return sorted[index]
    }
}
