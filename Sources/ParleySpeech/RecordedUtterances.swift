import ParleyAudio

/// Runs a recording through the daemon's listening path, for tools that
/// take files (`parley understand`): ParleyAudio's `Endpointer` in 100 ms
/// blocks and the daemon's `UtteranceSegmenter` deciding what a
/// `StreamingCommandDecoder` is fed and when an utterance ends, as
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
        var segmenter = UtteranceSegmenter(endpointer: configuration, listening: listening)
        let endpointer = Endpointer(configuration: segmenter.endpointer)
        var found: [Segment] = []
        var events: [EndpointEvent] = []
        var done = false

        /// Carries out the segmenter's decisions; true once `stop` said so.
        func act(_ decisions: [UtteranceSegmenter.Decision]) throws {
            for decision in decisions where !done {
                switch decision {
                case .begin: decoder.begin()
                case .feed(let range): decoder.feed(Array(samples[Int(range.lowerBound)..<Int(range.upperBound)]))
                case .checkPhrase: try act(segmenter.phraseChecked(try decoder.phraseProgress()))
                case .finish(let utterance):
                    endpointer.endSegment()   // as the daemon: what follows an early end is new speech
                    let segment = Segment(range: Int(utterance.lowerBound)..<Int(utterance.upperBound), result: try decoder.finish())
                    found.append(segment)
                    done = stop(segment)
                case .cancel: decoder.cancel()
                }
            }
        }

        var position = 0
        while position < samples.count && !done {
            let end = min(samples.count, position + blockSamples)
            samples.withUnsafeBufferPointer { all in
                endpointer.process(UnsafeBufferPointer(rebasing: all[position..<end])) { events.append($0) }
            }
            position = end
            for event in events { try act(segmenter.handle(event)) }
            events.removeAll(keepingCapacity: true)
            try act(segmenter.advance(to: Int64(position)))
        }
        if done { return found }
        if segmenter.isOpen {
            try act(segmenter.endOfStream())
        } else if found.isEmpty {
            found.append(Segment(range: 0..<samples.count, result: try decoder.recognize(samples)))
        }
        return found
    }
}
