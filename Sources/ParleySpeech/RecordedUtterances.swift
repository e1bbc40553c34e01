import ParleyAudio

/// Runs a recording through the daemon's listening path, for tools that
/// take files (`parley understand`): the `ListeningDriver` reading the file
/// in 100 ms blocks (`SampleArraySource`) and driving a
/// `StreamingCommandDecoder`, as `ListeningPipeline` drives the capture ring. Each endpointed segment
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
    /// The capture front end the recording goes through first, as the
    /// daemon's capture does (`speech.front_end`); a fresh state per
    /// recording. `neural` runs in the decoder instead (the caller wraps it
    /// in a `DenoisedCommandDecoder`, as the daemon does), not here.
    public var frontEnd: FrontEndSettings = .none
    /// The echo canceller as the daemon runs it while the device is silent
    /// (`speech.echo_cancel`): its reference is silence, so what it does to
    /// the recording is what it does to a person speaking to a quiet device.
    public var echo: EchoSettings = .off

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
    /// default: until one is accepted), through the `ListeningDriver`.
    /// Speech still open at the end of the recording ends there, as if the
    /// trailing silence had followed. A recording in which the endpointer
    /// finds no speech at all is decoded whole (the file is, by contract,
    /// the command), and reported as one segment over all of it.
    public func segments<Decoder: CommandDecoding>(
        of samples: [Int16], decoder: Decoder,
        stop: (Segment) -> Bool = { $0.result.match != nil }
    ) throws -> [Segment] {
        var driver = ListeningDriver(endpointer: configuration, listening: listening, bufferSamples: blockSamples)
        let source = SampleArraySource(samples, blockSamples: blockSamples)
        var found: [Segment] = []
        func listen<Source: SampleSource>(_ source: inout Source) throws -> ListeningDriver.Ending {
            try driver.run(&source, handler: DecoderUtterances(decoder)) { decoded in
                let segment = Segment(range: Int(decoded.range.lowerBound)..<Int(decoded.range.upperBound), result: decoded.result)
                found.append(segment)
                return stop(segment)
            }
        }
        let ending: ListeningDriver.Ending
        var whole = samples
        let stage = try FrontEnd(frontEnd)
        let canceller = try EchoCanceller(echo)
        if stage != nil || canceller != nil {
            let silence = canceller.map { EchoStage(canceller: $0, reference: RecordedReference([])) }
            var cleaned = FrontEndSource(source, frontEnd: stage, echo: silence, historySamples: max(16_000, samples.count),
                                         maximumBlockSamples: blockSamples + FrontEnd.frameSamples)
            ending = try listen(&cleaned)
            if !ending.stopped && ending.utterances == 0 { whole = cleaned.samples(0..<Int64(samples.count)) }
        } else {
            var plain = source
            ending = try listen(&plain)
        }
        if !ending.stopped && ending.utterances == 0 {
            found.append(Segment(range: 0..<samples.count, result: try decoder.recognize(whole)))
        }
        return found
    }

    /// What `parley understand` reports for a recording: its segments and
    /// the chosen result (the understood segment, else the first that held
    /// any words, for the transcript, else the first).
    public func understand<Decoder: CommandDecoding>(_ samples: [Int16], decoder: Decoder) throws
        -> (segments: [Segment], result: CommandResult?) {
        let segments = try segments(of: samples, decoder: decoder)
        let chosen = segments.first { $0.result.match != nil }
            ?? segments.first { !$0.result.transcript.isEmpty } ?? segments.first
        return (segments, chosen?.result)
    }
}
