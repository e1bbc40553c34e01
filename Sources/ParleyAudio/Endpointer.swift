import Foundation

/// Speech start and end, as sample positions in the capture timeline (the
/// ring's `writePosition` numbering) at `sampleRate`.
public enum EndpointEvent: Sendable, Equatable {
    /// Speech began at `start` (already moved back by the pre-roll); reported
    /// once the onset was confirmed, at `reportedAt`.
    case speechStarted(start: Int64, reportedAt: Int64)
    /// Speech ended: the segment is `start..<end` (`end` is the end of the
    /// last voiced frame plus the post-roll); reported after the trailing
    /// silence, at `reportedAt`.
    case speechEnded(start: Int64, end: Int64, reportedAt: Int64)
    /// Speech has been silent for `silence` milliseconds, one of
    /// `EndpointerConfiguration.pauseMilliseconds`; the segment stays open.
    /// `end` is where it would end if it ended now (as in `speechEnded`).
    /// Reported once per pause and length: whoever knows what was said (the
    /// `UtteranceSegmenter`, asking its grammar) may end the utterance here
    /// instead of waiting for the trailing silence.
    case speechPaused(start: Int64, end: Int64, reportedAt: Int64, silence: Int)

    /// Where in the stream the event was reported.
    public var reportedAt: Int64 {
        switch self {
        case .speechStarted(_, let at), .speechEnded(_, _, let at), .speechPaused(_, _, let at, _): at
        }
    }
}

/// Which frames outside a segment teach the endpointer's noise model. With
/// `.always`, the first words of a command said into loud noise, not yet
/// loud enough to start a segment, raise the floor and the spread, and with
/// them the start threshold, faster than the speech can reach it: at 6 dB
/// kitchen noise 47 of 111 commands gave no segment at all. A room that
/// really got louder is followed in every mode through
/// `EndpointerConfiguration.noiseWindowMilliseconds`.
public enum NoiseLearning: String, Sendable, Equatable, CaseIterable {
    /// Every frame (clamped deviations): the behaviour before.
    case always
    /// Only frames at or below the continue threshold (frames that would
    /// keep speech going are not taken for noise).
    case belowContinue
    /// Every frame, but those of a run above the continue threshold only
    /// once the run has ended without starting a segment (then it was
    /// noise: a burst teaches the spread as with `.always`); during the run
    /// the thresholds come from the model as it was before the run, and an
    /// onset discards what the run taught.
    case deferredInRuns
}

/// Tuning of the endpointer. Levels are frame energies in dB on the Int16
/// scale (0 dB = RMS of one LSB), relative to the tracked noise floor.
public struct EndpointerConfiguration: Sendable, Equatable {
    public var sampleRate: Int = 16_000
    /// Analysis frame (10 ms at 16 kHz).
    public var frameSamples: Int = 160
    /// A frame counts towards an onset when it is above the noise level by
    /// the larger of this margin and `startSpread` × the noise's own spread
    /// (so fluctuating noise such as a kitchen needs a larger margin than a
    /// quiet room).
    public var startThresholdDB: Double = 10
    public var startSpread: Double = 4
    /// Once in speech, frames above the larger of this margin and
    /// `continueSpread` × spread keep it going (hysteresis).
    public var continueThresholdDB: Double = 4
    public var continueSpread: Double = 2
    /// Onset: at least `onsetFrames` loud frames among the last `onsetWindow`.
    public var onsetFrames: Int = 6
    public var onsetWindow: Int = 10
    /// Of those loud frames, at least this many must be voiced (periodic with
    /// a pitch of 80-400 Hz): kitchen clatter and fans are loud but rarely
    /// voiced. 0 turns the voicing check off.
    public var onsetVoicedFrames: Int = 2
    /// Normalised autocorrelation a frame needs to count as voiced.
    public var voicingThreshold: Double = 0.6
    /// Silence after the last voiced frame before speech end is reported.
    /// Default 600 ms: long enough to bridge the pauses people make inside a
    /// spoken command (on the coffee-maker recordings, 90% of the longest
    /// in-utterance pauses are at most 350 ms), short enough that the reply
    /// feels immediate (turn-taking gaps between people are 200-700 ms).
    public var trailingSilenceMilliseconds: Int = 600
    /// Silences after the last voiced frame at which `speechPaused` events
    /// are reported (phrase-complete endpointing ends a command that nothing
    /// in the grammar can extend at the first). Lengths not below the
    /// trailing silence are ignored; none by default.
    public var pauseMilliseconds: [Int] = []
    /// Audio before the first loud frame that belongs to the segment (soft onsets).
    public var preRollMilliseconds: Int = 200
    /// Audio after the last loud frame that belongs to the segment (soft
    /// word endings under the noise); capped by the trailing silence.
    public var postRollMilliseconds: Int = 300
    /// Time constant of the noise level and spread, learned on non-speech frames.
    public var noiseAdaptationMilliseconds: Int = 1_000
    /// Which frames outside a segment teach the noise model (see
    /// `NoiseLearning`). `.deferredInRuns` was chosen over `.belowContinue`
    /// and `.always` on training noises with 5-fold cross-validation over the
    /// recordings (training/bin/eval-endpoint-cv.sh; BENCHMARKS.md).
    public var noiseLearning: NoiseLearning = .deferredInRuns
    /// At an onset the segment is back-dated to the start of the run of
    /// frames above the continue threshold that led to it (the same
    /// hysteresis as at the end, looking back), at most this far before the
    /// first frame above the start threshold: in noise a command's first
    /// syllable is often above the continue threshold but not the start one.
    public var onsetLookbackMilliseconds: Int = 500
    /// A segment whose loudest frame is less than this far above the noise
    /// floor ends `noisyPostRollMilliseconds` after its last loud frame
    /// instead of `postRollMilliseconds`: in loud noise the weak word ends
    /// ("… latte", "… milk") sink under the noise before the speech stops.
    /// The end is still reported after the trailing silence, so this costs
    /// no latency; 0 turns it off. 25 dB was chosen on training noises
    /// (babble, pink, brown, clatter, white) with 5-fold cross-validation
    /// over the recordings (training/bin/eval-endpoint-cv.sh; BENCHMARKS.md).
    public var noisySegmentPeakDB: Double = 25
    public var noisyPostRollMilliseconds: Int = 450
    /// The noise level never stays below the minimum smoothed frame level
    /// over this window (minimum statistics), so a room that got louder is
    /// followed within this time even though its frames look like speech.
    public var noiseWindowMilliseconds: Int = 2_000
    /// The floor never goes below this (digital silence would make every click speech).
    public var minimumFloorDB: Double = 20
    /// Segments longer than this end regardless (a stuck noise source).
    public var maximumSegmentMilliseconds: Int = 15_000

    public init() {}

    public init(trailingSilenceMilliseconds: Int) {
        self.trailingSilenceMilliseconds = trailingSilenceMilliseconds
    }
}

/// A voice activity detector that adapts to the room and reports speech
/// start and end. Per 10 ms frame it measures the level of the high-passed
/// signal (a DC blocker at ~130 Hz removes offset and rumble), smooths it,
/// and compares it with a noise model learned on non-speech frames: the
/// noise level (exponential average, never below the minimum of the last
/// two seconds) and its spread (average absolute deviation). Onset needs
/// several loud frames in a short window; hysteresis keeps speech going
/// through quieter phonemes; the end is reported after the trailing silence.
///
/// Storage is allocated in `init`; `process` allocates nothing (checked by
/// a test), so it may run on the capture thread or the recogniser's thread.
/// Not thread-safe: one instance per stream, used by one thread.
public final class Endpointer {
    public let configuration: EndpointerConfiguration
    private let levels: UnsafeMutablePointer<Double>   // smoothed levels over the minimum-statistics window (ring)
    private let levelCapacity: Int
    private var levelIndex = 0
    private var levelCount = 0
    private let onsetHistory: UnsafeMutablePointer<Bool>    // loud/quiet of the last `onsetWindow` frames
    private let voicedHistory: UnsafeMutablePointer<Bool>   // voiced loud frames among them
    private let onsetCapacity: Int
    private let recent: UnsafeMutablePointer<Double>        // last 480 high-passed samples (30 ms), ring
    private var recentIndex = 0
    private let decimated: UnsafeMutablePointer<Double>     // those 30 ms at 8 kHz, for the pitch check
    private var onsetIndex = 0
    private var frameEnergy: Double = 0
    private var frameFill = 0
    private var previousInput: Double = 0
    private var previousOutput: Double = 0
    private var smoothed: Double = -1
    private var noiseLevel: Double = -1
    private var noiseSpread: Double = 2
    /// `.deferredInRuns`: the noise model from before the current run above the continue threshold.
    private var heldNoise: (level: Double, spread: Double)?
    private var framesSeen: Int64 = 0
    private var inSpeech = false
    private var runStart: Int64 = 0          // first loud frame of the current loud run (frames)
    private var lastLoudFrame: Int64 = -1_000
    private var candidateRunStart: Int64 = 0   // first frame above the continue threshold of the current run (frames)
    private var lastCandidateFrame: Int64 = -1_000
    private var segmentPeak: Double = 0        // loudest smoothed level in the open segment (dB)
    private var segmentStart: Int64 = 0
    private var lastVoicedEnd: Int64 = 0
    private let trailingFrames: Int
    /// `pauseMilliseconds` in frames, with the milliseconds reported.
    private let pauseFrames: [(frames: Int64, milliseconds: Int)]
    private let preRollSamples: Int64
    private let postRollSamples: Int64
    private let noisyPostRollSamples: Int64
    private let lookbackFrames: Int64
    private let maxSegmentSamples: Int64
    private let adaptation: Double

    public init(configuration: EndpointerConfiguration = EndpointerConfiguration()) {
        self.configuration = configuration
        let frameMs = Double(configuration.frameSamples) * 1000 / Double(configuration.sampleRate)
        levelCapacity = max(1, Int(Double(configuration.noiseWindowMilliseconds) / frameMs))
        levels = .allocate(capacity: levelCapacity)
        levels.initialize(repeating: 0, count: levelCapacity)
        onsetCapacity = max(1, configuration.onsetWindow)
        onsetHistory = .allocate(capacity: onsetCapacity)
        onsetHistory.initialize(repeating: false, count: onsetCapacity)
        voicedHistory = .allocate(capacity: onsetCapacity)
        voicedHistory.initialize(repeating: false, count: onsetCapacity)
        recent = .allocate(capacity: 480)
        recent.initialize(repeating: 0, count: 480)
        decimated = .allocate(capacity: 240)
        decimated.initialize(repeating: 0, count: 240)
        trailingFrames = max(1, Int((Double(configuration.trailingSilenceMilliseconds) / frameMs).rounded()))
        let trailing = trailingFrames
        pauseFrames = configuration.pauseMilliseconds.compactMap { milliseconds in
            let frames = Int((Double(milliseconds) / frameMs).rounded())
            return frames > 0 && frames < trailing ? (Int64(frames), milliseconds) : nil
        }
        preRollSamples = Int64(configuration.preRollMilliseconds * configuration.sampleRate / 1000)
        postRollSamples = Int64(min(configuration.postRollMilliseconds, configuration.trailingSilenceMilliseconds)
                                * configuration.sampleRate / 1000)
        noisyPostRollSamples = Int64(min(configuration.noisyPostRollMilliseconds, configuration.trailingSilenceMilliseconds)
                                     * configuration.sampleRate / 1000)
        lookbackFrames = Int64((Double(configuration.onsetLookbackMilliseconds) / frameMs).rounded())
        maxSegmentSamples = Int64(configuration.maximumSegmentMilliseconds) * Int64(configuration.sampleRate) / 1000
        adaptation = min(1, frameMs / Double(max(1, configuration.noiseAdaptationMilliseconds)))
    }

    deinit {
        levels.deallocate()
        onsetHistory.deallocate()
        voicedHistory.deallocate()
        recent.deallocate()
        decimated.deallocate()
    }

    /// The current noise level estimate (dB).
    public var noiseFloorDB: Double { max(configuration.minimumFloorDB, heldNoise?.level ?? noiseLevel) }

    /// The noise's spread around its level (dB, average absolute deviation) the thresholds use.
    private var spreadDB: Double { heldNoise?.spread ?? noiseSpread }

    /// Whether a segment is open.
    public var isInSpeech: Bool { inSpeech }

    /// Ends the open segment without an event: its utterance was ended
    /// early (a complete phrase at a pause), so whatever is said next is a
    /// new segment with its own `speechStarted`, not the rest of this one.
    public func endSegment() {
        guard inSpeech else { return }
        inSpeech = false
        for i in 0..<onsetCapacity {
            onsetHistory[i] = false
            voicedHistory[i] = false
        }
        lastLoudFrame = -1_000
        lastCandidateFrame = -1_000
    }

    /// Feeds the next samples of the stream; calls `emit` for each event.
    public func process(_ samples: UnsafeBufferPointer<Int16>, emit: (EndpointEvent) -> Void) {
        let frame = configuration.frameSamples
        guard let base = samples.baseAddress else { return }
        for index in 0..<samples.count {
            let x = Double(base[index])
            let y = x - previousInput + 0.95 * previousOutput      // DC blocker / high-pass
            previousInput = x
            previousOutput = y
            recent[recentIndex] = y
            recentIndex = recentIndex == 479 ? 0 : recentIndex + 1
            frameEnergy += y * y
            frameFill += 1
            if frameFill == frame {
                finishFrame(emit: emit)
                frameEnergy = 0
                frameFill = 0
            }
        }
    }

    /// Convenience for arrays (tests, evaluation).
    public func process(_ samples: [Int16], emit: (EndpointEvent) -> Void) {
        samples.withUnsafeBufferPointer { process($0, emit: emit) }
    }

    /// Pitch check on the last 30 ms: decimate to 8 kHz (pair average, a
    /// crude low-pass that keeps the fundamental and first formant) and look
    /// for a normalised autocorrelation peak at lags of 2.5-12.5 ms.
    private func isVoiced() -> Bool {
        var j = recentIndex
        for i in 0..<240 {
            let a = recent[j]
            j = j == 479 ? 0 : j + 1
            let b = recent[j]
            j = j == 479 ? 0 : j + 1
            decimated[i] = a + b
        }
        var best = 0.0
        do {
            let x = decimated
            for lag in 20...100 {
                var xy = 0.0, xx = 0.0, yy = 0.0
                for n in 0..<(240 - lag) {
                    let a = x[n], b = x[n + lag]
                    xy += a * b
                    xx += a * a
                    yy += b * b
                }
                let denominator = (xx * yy).squareRoot()
                if denominator > 0 { best = max(best, xy / denominator) }
            }
        }
        return best >= configuration.voicingThreshold
    }

    private func finishFrame(emit: (EndpointEvent) -> Void) {
        let config = configuration
        let frame = Int64(config.frameSamples)
        let level = 10 * log10(frameEnergy / Double(config.frameSamples) + 1)
        // Light smoothing (two-frame time constant) so single-frame spikes do not count.
        smoothed = smoothed < 0 ? level : smoothed + 0.5 * (level - smoothed)
        levels[levelIndex] = smoothed
        levelIndex = (levelIndex + 1) % levelCapacity
        levelCount = min(levelCount + 1, levelCapacity)
        var windowMinimum = Double.infinity
        for i in 0..<levelCount { windowMinimum = min(windowMinimum, levels[i]) }
        if noiseLevel < 0 { noiseLevel = smoothed }
        noiseLevel = max(noiseLevel, windowMinimum)
        if let held = heldNoise { heldNoise = (max(held.level, windowMinimum), held.spread) }

        let floor = noiseFloorDB
        let startThreshold = floor + max(config.startThresholdDB, config.startSpread * spreadDB)
        let continueThreshold = floor + max(config.continueThresholdDB, config.continueSpread * spreadDB)
        let frameStart = framesSeen * frame
        let frameEnd = frameStart + frame
        framesSeen += 1

        if !inSpeech {
            let loud = smoothed > startThreshold
            let candidate = smoothed > continueThreshold
            let voiced = loud && config.onsetVoicedFrames > 0 && isVoiced()
            if config.noiseLearning == .deferredInRuns {
                let frameIndex = framesSeen - 1
                if candidate && heldNoise == nil {
                    heldNoise = (noiseLevel, noiseSpread)
                } else if heldNoise != nil
                            && ((!candidate && frameIndex - lastCandidateFrame > 15)
                                || frameIndex - candidateRunStart > Int64(levelCapacity)) {
                    // The run ended without an onset (or outlasted the noise window: the room
                    // changed): it was noise, and what it taught stands.
                    heldNoise = nil
                }
            }
            // Learn the noise outside speech (deviations clamped so a burst cannot run away with it).
            if !(candidate && config.noiseLearning == .belowContinue) {
                let deviation = min(smoothed - noiseLevel, 10)
                noiseLevel += adaptation * deviation
                noiseSpread += adaptation * (abs(deviation) - noiseSpread)
            }
            if candidate {
                // Runs above the continue threshold join up over gaps of up to 150 ms, as loud runs do.
                if framesSeen - 1 - lastCandidateFrame > 15 { candidateRunStart = framesSeen - 1 }
                lastCandidateFrame = framesSeen - 1
            }
            if loud {
                // A new run starts after 150 ms without loud frames; the segment is back-dated to it.
                if framesSeen - 1 - lastLoudFrame > 15 { runStart = framesSeen - 1 }
                lastLoudFrame = framesSeen - 1
            }
            onsetHistory[onsetIndex] = loud
            voicedHistory[onsetIndex] = voiced
            onsetIndex = (onsetIndex + 1) % onsetCapacity
            var count = 0
            var voicedCount = 0
            for i in 0..<onsetCapacity {
                if onsetHistory[i] { count += 1 }
                if voicedHistory[i] { voicedCount += 1 }
            }
            if count >= config.onsetFrames && voicedCount >= config.onsetVoicedFrames {
                inSpeech = true
                if let held = heldNoise {   // the run was speech: forget what it taught
                    (noiseLevel, noiseSpread) = held
                    heldNoise = nil
                }
                // Back-date to the start of the loud run (voicing may confirm late), or of the
                // run above the continue threshold that led to it, then the pre-roll.
                let first = min(runStart, max(candidateRunStart, runStart - lookbackFrames))
                segmentStart = max(0, first * frame - preRollSamples)
                lastVoicedEnd = frameEnd
                segmentPeak = smoothed
                for i in 0..<onsetCapacity {
                    onsetHistory[i] = false
                    voicedHistory[i] = false
                }
                emit(.speechStarted(start: segmentStart, reportedAt: frameEnd))
            }
            return
        }
        if smoothed > continueThreshold {
            lastVoicedEnd = frameEnd
        }
        segmentPeak = max(segmentPeak, smoothed)
        let postRoll = config.noisySegmentPeakDB > 0 && segmentPeak - floor < config.noisySegmentPeakDB
            ? max(noisyPostRollSamples, postRollSamples) : postRollSamples
        let silentFrames = (frameEnd - lastVoicedEnd) / frame
        // Exactly once per pause and length: the count passes each value
        // once before speech resumes (which sets it back to 0) or ends.
        for pause in pauseFrames where silentFrames == pause.frames && frameEnd - segmentStart < maxSegmentSamples {
            emit(.speechPaused(start: segmentStart, end: min(lastVoicedEnd + postRoll, frameEnd), reportedAt: frameEnd,
                               silence: pause.milliseconds))
        }
        if silentFrames >= Int64(trailingFrames) || frameEnd - segmentStart >= maxSegmentSamples {
            inSpeech = false
            emit(.speechEnded(start: segmentStart, end: min(lastVoicedEnd + postRoll, frameEnd), reportedAt: frameEnd))
        }
    }
}
