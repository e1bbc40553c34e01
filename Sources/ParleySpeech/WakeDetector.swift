import Foundation

/// How the device is woken (SPEC section 3).
public enum WakeMode: Sendable, Hashable {
    /// "Hey <name>", or just "<name>" when `heyOptional`.
    case named(String, heyOptional: Bool)
    /// "Hey" followed at once by a known phrase: the detector spots "hey"
    /// and the command stage confirms the phrase that follows.
    case direct
}

/// Keyword spotting on a continuous 16 kHz stream (PocketSphinx keyphrase
/// search, ps_set_kws). Feed frames as they arrive; detections come back
/// as stream times in seconds. Owns its decoder; use from one thread.
public final class WakeDetector {
    public let mode: WakeMode
    /// 0 (fewest false alarms) ... 1 (fewest misses).
    public let sensitivity: Double
    let decoder: SphinxDecoder
    private var samplesSeen = 0
    private var utteranceStart = 0
    private var inUtterance = false
    /// Restart the keyword search this often, so its internal state stays bounded.
    private let restartSamples = 16_000 * 30

    /// Keyword threshold for a sensitivity: 1e-45 at 1 down to 1e-5 at 0.
    public static func threshold(sensitivity: Double) -> Double {
        pow(10, -(5 + 40 * min(1, max(0, sensitivity))))
    }

    public init(mode: WakeMode, sensitivity: Double = 0.5, settings: DecoderSettings = DecoderSettings()) throws {
        guard (0...1).contains(sensitivity) else {
            throw SpeechError.badSetting(name: "sensitivity", value: "\(sensitivity)", expected: "a number from 0 to 1")
        }
        self.mode = mode
        self.sensitivity = sensitivity
        let threshold = Self.threshold(sensitivity: sensitivity)
        var lines: [(phrase: String, threshold: Double)]
        switch mode {
        case .named(let name, let heyOptional):
            let words = RhinoContext.normalise(name)
            guard !words.isEmpty else { throw SpeechError.badSetting(name: "wake name", value: name, expected: "at least one word") }
            let phrase = words.joined(separator: " ")
            lines = [("hey " + phrase, threshold)]
            if heyOptional { lines.append((phrase, threshold)) }
        case .direct:
            lines = [("hey", threshold)]
        }
        var s = settings
        s.keywordThreshold = threshold
        decoder = try SphinxDecoder(settings: s, words: Set(lines.flatMap { $0.phrase.split(separator: " ").map(String.init) }))
        try decoder.setKeywords(name: "wake", lines: lines)
        try decoder.use("wake")
    }

    /// Processes frames; returns the stream times (seconds, end of the wake
    /// phrase) of any detections in them.
    public func process(_ frames: [Int16]) throws -> [Double] {
        if !inUtterance {
            try decoder.startUtterance()
            inUtterance = true
            utteranceStart = samplesSeen
        }
        try decoder.process(frames)
        samplesSeen += frames.count
        var detections: [Double] = []
        if decoder.hypothesis() != nil {
            // The end of these frames: the keyword search reports a detection
            // as soon as the phrase ends, so this is at most one frame late.
            // (Its segment frames are not reliable across restarts.)
            detections.append(Double(samplesSeen) / Double(PCMAudio.sampleRate))
            try reset()
        } else if samplesSeen - utteranceStart > restartSamples {
            try reset()
        }
        return detections
    }

    /// Ends the current search utterance; the next frames start afresh.
    public func reset() throws {
        if inUtterance { try decoder.endUtterance() }
        inUtterance = false
    }

    /// Streams a whole recording in 100 ms frames; times are seconds from
    /// the start of the recording.
    public func detections(in audio: PCMAudio) throws -> [Double] {
        try reset()
        let origin = Double(samplesSeen) / Double(PCMAudio.sampleRate)
        var result: [Double] = []
        var index = 0
        while index < audio.samples.count {
            let end = min(audio.samples.count, index + 1600)
            result += try process(Array(audio.samples[index..<end]))
            index = end
        }
        try reset()
        return result.map { $0 - origin }
    }
}
