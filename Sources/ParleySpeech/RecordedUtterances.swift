import ParleyAudio

/// How the listening path turns endpointed speech into decoder input; the
/// daemon's `ListeningPipeline` and `RecordedUtterances` share these.
public struct UtteranceListening: Sendable, Equatable {
    /// Audio fed to the decoders before the endpointer's segment start (which
    /// already includes its 200 ms pre-roll). PocketSphinx's noise removal
    /// and voice detector learn the room from the first frames they see; with
    /// more of the room before the words they clean the words better (kitchen
    /// noise, `parley understand`: 12 dB 85.6% → 88.3%, 6 dB 56.8% → 58.6%).
    public var decoderLeadInMilliseconds = 400
    /// When the endpointer reports the end of speech but the words so far
    /// are not yet a whole phrase of the grammar ("a large …"), the
    /// utterance is held open this long for the rest of it; speech resuming
    /// within it continues the same utterance. A whole phrase ends at once,
    /// so this costs no latency on complete commands (12 dB 88.3% → 90.1%).
    /// 0 turns it off.
    public var phraseHoldMilliseconds = 600

    public init() {}
}

/// Runs a recording through the daemon's listening path, for tools that
/// take files (`parley understand`): ParleyAudio's `Endpointer` in 100 ms
/// blocks, and a `StreamingCommandDecoder` fed from each segment's start
/// (with pre-roll) while the endpointer is still in speech, holding back the
/// part of the trailing silence the endpointer will cut off — what
/// `ListeningPipeline` does with the capture ring. Each endpointed segment
/// gives one `CommandResult`.
///
/// As in a listening window of the daemon, a segment that is rejected does
/// not end the search: the person's command may follow a cough or a clatter
/// that the endpointer took for speech. `firstAccepted` returns the first
/// segment that was understood.
public struct RecordedUtterances {
    public let configuration: EndpointerConfiguration
    public let listening: UtteranceListening
    /// Samples per read of the stand-in ring (the daemon reads up to 100 ms at a time).
    public var blockSamples = 1_600

    public init(configuration: EndpointerConfiguration = EndpointerConfiguration(),
                listening: UtteranceListening = UtteranceListening()) {
        self.configuration = configuration
        self.listening = listening
    }

    /// One endpointed segment and its recognition.
    public struct Segment: Sendable {
        public var range: Range<Int>
        public var result: CommandResult
    }

    /// Decodes the segments of `samples` in order until `stop` says so (by
    /// default: until one is accepted). Speech still open at the end of the
    /// recording ends there, as if the trailing silence had followed. A
    /// recording in which the endpointer finds no speech at all is decoded
    /// whole (the file is, by contract, the command), and reported as one
    /// segment over all of it.
    public func segments(
        of samples: [Int16], decoder: StreamingCommandDecoder,
        stop: (Segment) -> Bool = { $0.result.match != nil }
    ) throws -> [Segment] {
        let endpointer = Endpointer(configuration: configuration)
        let rate = configuration.sampleRate
        let holdBack = (configuration.trailingSilenceMilliseconds
            - min(configuration.postRollMilliseconds, configuration.trailingSilenceMilliseconds)) * rate / 1000
            + configuration.frameSamples
        var found: [Segment] = []
        var open: (start: Int, fed: Int)?
        // A speech end held open because the words so far are not a whole
        // phrase yet: the segment's end, and until when more speech may continue it.
        var held: (end: Int, until: Int)?
        let holdSamples = listening.phraseHoldMilliseconds * rate / 1000
        let leadSamples = listening.decoderLeadInMilliseconds * rate / 1000
        var events: [EndpointEvent] = []
        var position = 0

        func feed(upTo end: Int) {
            guard var current = open, end > current.fed else { return }
            decoder.feed(Array(samples[current.fed..<end]))
            current.fed = end
            open = current
        }
        func finish(start: Int, end: Int) throws -> Bool {
            feed(upTo: end)
            open = nil
            let segment = Segment(range: start..<end, result: try decoder.finish())
            found.append(segment)
            return stop(segment)
        }

        while position < samples.count {
            let end = min(samples.count, position + blockSamples)
            samples.withUnsafeBufferPointer { all in
                endpointer.process(UnsafeBufferPointer(rebasing: all[position..<end])) { events.append($0) }
            }
            position = end
            for event in events {
                switch event {
                case .speechStarted(let start, _):
                    if held != nil { held = nil; continue }   // the command goes on
                    let start = max(0, Int(start) - leadSamples)
                    decoder.begin()
                    open = (start, start)
                case .speechEnded(_, let segmentEnd, _):
                    guard let current = open else { continue }
                    if holdSamples > 0 {
                        feed(upTo: min(samples.count, Int(segmentEnd)))
                        if try !decoder.wordsSoFarFormAPhrase() {
                            held = (min(samples.count, Int(segmentEnd)), Int(segmentEnd) + holdSamples)
                            continue
                        }
                    }
                    if try finish(start: current.start, end: min(samples.count, Int(segmentEnd))) { return found }
                }
            }
            events.removeAll(keepingCapacity: true)
            if let pending = held, position >= pending.until, let current = open {
                held = nil
                if try finish(start: current.start, end: pending.end) { return found }
            }
            feed(upTo: position - holdBack)
        }
        if let current = open {
            _ = try finish(start: current.start, end: held?.end ?? samples.count)
        } else if found.isEmpty {
            found.append(Segment(range: 0..<samples.count, result: try decoder.recognize(samples)))
        }
        return found
    }
}
