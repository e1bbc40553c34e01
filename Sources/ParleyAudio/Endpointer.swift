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
    /// Silence after the last voiced frame before speech end is reported.
    /// Default 600 ms: long enough to bridge the pauses people make inside a
    /// spoken command (on the coffee-maker recordings, 90% of the longest
    /// in-utterance pauses are at most 350 ms), short enough that the reply
    /// feels immediate (turn-taking gaps between people are 200-700 ms).
    public var trailingSilenceMilliseconds: Int = 600
    /// Audio before the first loud frame that belongs to the segment (soft onsets).
    public var preRollMilliseconds: Int = 200
    /// Audio after the last loud frame that belongs to the segment (soft
    /// word endings under the noise); capped by the trailing silence.
    public var postRollMilliseconds: Int = 300
    /// Time constant of the noise level and spread, learned on non-speech frames.
    public var noiseAdaptationMilliseconds: Int = 1_000
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
/// A value type with fixed storage: `process` allocates nothing, so it may
/// run on the capture thread or the recogniser's thread.
public struct Endpointer: Sendable {
    public let configuration: EndpointerConfiguration
    private var levels: [Double]          // smoothed levels over the minimum-statistics window (ring)
    private var levelIndex = 0
    private var levelCount = 0
    private var onsetHistory: [Bool]      // loud/quiet of the last `onsetWindow` frames
    private var onsetIndex = 0
    private var frameEnergy: Double = 0
    private var frameFill = 0
    private var previousInput: Double = 0
    private var previousOutput: Double = 0
    private var smoothed: Double = -1
    private var noiseLevel: Double = -1
    private var noiseSpread: Double = 2
    private var framesSeen: Int64 = 0
    private var inSpeech = false
    private var segmentStart: Int64 = 0
    private var lastVoicedEnd: Int64 = 0
    private let trailingFrames: Int
    private let preRollSamples: Int64
    private let postRollSamples: Int64
    private let maxSegmentSamples: Int64
    private let adaptation: Double

    public init(configuration: EndpointerConfiguration = EndpointerConfiguration()) {
        self.configuration = configuration
        let frameMs = Double(configuration.frameSamples) * 1000 / Double(configuration.sampleRate)
        levels = [Double](repeating: 0, count: max(1, Int(Double(configuration.noiseWindowMilliseconds) / frameMs)))
        onsetHistory = [Bool](repeating: false, count: max(1, configuration.onsetWindow))
        trailingFrames = max(1, Int((Double(configuration.trailingSilenceMilliseconds) / frameMs).rounded()))
        preRollSamples = Int64(configuration.preRollMilliseconds * configuration.sampleRate / 1000)
        postRollSamples = Int64(min(configuration.postRollMilliseconds, configuration.trailingSilenceMilliseconds)
                                * configuration.sampleRate / 1000)
        maxSegmentSamples = Int64(configuration.maximumSegmentMilliseconds) * Int64(configuration.sampleRate) / 1000
        adaptation = min(1, frameMs / Double(max(1, configuration.noiseAdaptationMilliseconds)))
    }

    /// The current noise level estimate (dB).
    public var noiseFloorDB: Double { max(configuration.minimumFloorDB, noiseLevel) }

    /// Whether a segment is open.
    public var isInSpeech: Bool { inSpeech }

    /// Feeds the next samples of the stream; calls `emit` for each event.
    public mutating func process(_ samples: UnsafeBufferPointer<Int16>, emit: (EndpointEvent) -> Void) {
        let frame = configuration.frameSamples
        for s in samples {
            let x = Double(s)
            let y = x - previousInput + 0.95 * previousOutput      // DC blocker / high-pass
            previousInput = x
            previousOutput = y
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
    public mutating func process(_ samples: [Int16], emit: (EndpointEvent) -> Void) {
        samples.withUnsafeBufferPointer { process($0, emit: emit) }
    }

    private mutating func finishFrame(emit: (EndpointEvent) -> Void) {
        let config = configuration
        let frame = Int64(config.frameSamples)
        let level = 10 * log10(frameEnergy / Double(config.frameSamples) + 1)
        // Light smoothing (two-frame time constant) so single-frame spikes do not count.
        smoothed = smoothed < 0 ? level : smoothed + 0.5 * (level - smoothed)
        levels[levelIndex] = smoothed
        levelIndex = (levelIndex + 1) % levels.count
        levelCount = min(levelCount + 1, levels.count)
        var windowMinimum = Double.infinity
        for i in 0..<levelCount { windowMinimum = min(windowMinimum, levels[i]) }
        if noiseLevel < 0 { noiseLevel = smoothed }
        noiseLevel = max(noiseLevel, windowMinimum)

        let floor = noiseFloorDB
        let startThreshold = floor + max(config.startThresholdDB, config.startSpread * noiseSpread)
        let continueThreshold = floor + max(config.continueThresholdDB, config.continueSpread * noiseSpread)
        let frameStart = framesSeen * frame
        let frameEnd = frameStart + frame
        framesSeen += 1

        if !inSpeech {
            let loud = smoothed > startThreshold
            // Learn the noise outside speech (deviations clamped so a burst cannot run away with it).
            let deviation = min(smoothed - noiseLevel, 10)
            noiseLevel += adaptation * deviation
            noiseSpread += adaptation * (abs(deviation) - noiseSpread)
            onsetHistory[onsetIndex] = loud
            onsetIndex = (onsetIndex + 1) % onsetHistory.count
            var count = 0
            for v in onsetHistory where v { count += 1 }
            if count >= config.onsetFrames {
                inSpeech = true
                // Back-date to the first loud frame in the onset window, then the pre-roll.
                var firstLoud = 0
                for back in 0..<onsetHistory.count {
                    let idx = (onsetIndex - 1 - back + 2 * onsetHistory.count) % onsetHistory.count
                    if onsetHistory[idx] { firstLoud = back }
                }
                let firstLoudStart = frameEnd - Int64(firstLoud + 1) * frame
                segmentStart = max(0, firstLoudStart - preRollSamples)
                lastVoicedEnd = frameEnd
                for i in onsetHistory.indices { onsetHistory[i] = false }
                emit(.speechStarted(start: segmentStart, reportedAt: frameEnd))
            }
            return
        }
        if smoothed > continueThreshold {
            lastVoicedEnd = frameEnd
        }
        let silentFrames = (frameEnd - lastVoicedEnd) / frame
        if silentFrames >= Int64(trailingFrames) || frameEnd - segmentStart >= maxSegmentSamples {
            inSpeech = false
            emit(.speechEnded(start: segmentStart, end: min(lastVoicedEnd + postRollSamples, frameEnd), reportedAt: frameEnd))
        }
    }
}
