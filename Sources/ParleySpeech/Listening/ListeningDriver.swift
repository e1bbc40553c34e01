import ParleyAudio
import ParleyCore

/// What the `ListeningDriver` hands the segmenter's decisions to: one
/// utterance at a time. `DecoderUtterances` adapts any `UtteranceDecoder`
/// (`parley understand`, benchmarks, tests); the daemon's listener chooses
/// a grammar per utterance, streams the wake detector beside the command
/// decoder and decides with `ListeningOutcome`.
public protocol UtteranceHandler: AnyObject {
    /// What a finished utterance gives (nil from `finish`: nothing to report).
    associatedtype Heard
    /// An utterance begins: decoder input from `start` (lead-in included),
    /// the speech itself from `speech`.
    func begin(start: Int64, speech: Int64) throws
    /// More of the open utterance, contiguous with the last feed.
    func feed(_ samples: [Int16]) throws
    /// How far the words fed so far have come through the grammar.
    func phraseProgress() throws -> PhraseProgress
    /// The open utterance ended; all of `utterance` was fed. `newest`: one
    /// past the newest sample read; `samples` gives the utterance's audio,
    /// `audio` any range the source still holds (nil for one it no longer
    /// does: an earlier utterance's, to decode the two together).
    func finish(_ utterance: Range<Int64>, newest: Int64, samples: () -> [Int16],
                audio: (Range<Int64>) -> [Int16]?) throws -> Heard?
    /// The open utterance is dropped.
    func cancel()
    /// For the open utterance: whether a speech end may be held for the
    /// rest of a phrase, and whether a pause may end a complete one
    /// (`UtteranceSegmenter.handle`). Default: both.
    var phraseRules: PhraseRules { get }
    /// Asked after each block while an utterance is open (`newest`: the
    /// stream position the listener has reached): a position splits it
    /// there, as what it was decoded for no longer applies from that
    /// point on. What came before is finished and decided; the next
    /// utterance begins just before the position. nil goes on. At most
    /// `newest`. Default: never.
    func splitPosition(newest: Int64) -> Int64?
    /// The stream reached `newest` (after each block's decisions).
    func advanced(to newest: Int64)
}

/// Which of the segmenter's phrase rules apply to an utterance.
public struct PhraseRules: Sendable, Equatable {
    /// A speech end whose words are not yet a whole phrase is held for the rest.
    public var hold: Bool
    /// A pause after a complete phrase ends the utterance.
    public var earlyEnd: Bool

    public init(hold: Bool, earlyEnd: Bool) {
        self.hold = hold
        self.earlyEnd = earlyEnd
    }

    public static let all = PhraseRules(hold: true, earlyEnd: true)
    /// Open text (dictation): no phrases to complete.
    public static let none = PhraseRules(hold: false, earlyEnd: false)
}

extension UtteranceHandler {
    public var phraseRules: PhraseRules { .all }
    public func splitPosition(newest: Int64) -> Int64? { nil }
    public func advanced(to newest: Int64) {}
}

/// The one listening loop: reads a `SampleSource` block by block, runs the
/// `Endpointer`, and carries out the `UtteranceSegmenter`'s decisions on an
/// `UtteranceHandler`. The daemon (`ListeningPipeline`, the capture ring),
/// `parley understand` (`RecordedUtterances`, a file), the speech
/// benchmarks and the tests all listen through it, so every figure is
/// measured on the loop the device runs.
public struct ListeningDriver {
    public private(set) var segmenter: UtteranceSegmenter
    /// Created from the segmenter's configuration (it carries the pauses).
    public let endpointer: Endpointer
    /// The read buffer's length: at most this much is read per block.
    public let bufferSamples: Int

    public init(endpointer configuration: EndpointerConfiguration = EndpointerConfiguration(),
                listening: UtteranceListening = UtteranceListening(), bufferSamples: Int = 1_600) {
        // An empty buffer would read nothing, forever.
        precondition(bufferSamples > 0, "ListeningDriver: bufferSamples \(bufferSamples), expected a positive number of samples")
        segmenter = UtteranceSegmenter(endpointer: configuration, listening: listening)
        endpointer = Endpointer(configuration: segmenter.endpointer)
        self.bufferSamples = bufferSamples
    }

    /// How a run ended.
    public struct Ending: Sendable, Equatable {
        /// `heard` asked to stop.
        public var stopped: Bool
        /// Utterances finished (each one `finish` call).
        public var utterances: Int
    }

    /// Listens to `source` until it ends or `heard` (given each non-nil
    /// `finish` result) returns true. At the end of a recording, speech
    /// still open ends there; at the end of a live stream it is dropped.
    /// Errors of the handler end the run.
    @discardableResult
    public mutating func run<Source: SampleSource, Handler: UtteranceHandler>(
        _ source: inout Source, handler: Handler, heard: (Handler.Heard) throws -> Bool = { _ in false }
    ) throws -> Ending {
        var buffer = [Int16](repeating: 0, count: bufferSamples)
        var events: [EndpointEvent] = []
        var ending = Ending(stopped: false, utterances: 0)
        var newest: Int64 = 0
        let configuration = segmenter.endpointer
        let preRoll = Int64(configuration.preRollMilliseconds * configuration.sampleRate / 1000)

        func act(_ decisions: [UtteranceSegmenter.Decision]) throws {
            for decision in decisions where !ending.stopped {
                switch decision {
                case .begin(let start, let speech):
                    try handler.begin(start: start, speech: speech)
                case .feed(let range):
                    try handler.feed(source.samples(range))
                case .checkPhrase:
                    try act(segmenter.phraseChecked(handler.phraseProgress()))
                case .finish(let utterance), .finishPart(let utterance):
                    // Ended (at a pause, a complete phrase, too): what is
                    // said next starts a segment of its own. A part ends
                    // while speech goes on: the endpointer's segment too.
                    if case .finish = decision { endpointer.endSegment() }
                    ending.utterances += 1
                    let result = try handler.finish(utterance, newest: newest, samples: { source.samples(utterance) },
                                                    audio: { range in
                                                        range.lowerBound >= source.floor && range.upperBound <= newest
                                                            ? source.samples(range) : nil
                                                    })
                    if let result, try heard(result) { ending.stopped = true }
                case .cancel:
                    handler.cancel()
                }
            }
        }

        while !ending.stopped {
            let block = buffer.withUnsafeMutableBufferPointer { source.next(into: $0) }
            guard case .samples(let position, let count) = block else {
                if block == .ended { break }
                continue
            }
            newest = position + Int64(count)
            buffer.withUnsafeBufferPointer { all in
                endpointer.process(UnsafeBufferPointer(rebasing: all[0..<count])) { events.append($0) }
            }
            for event in events {
                let rules = handler.phraseRules
                try act(segmenter.handle(event, floor: source.floor, holdAllowed: rules.hold, earlyEndAllowed: rules.earlyEnd))
            }
            events.removeAll(keepingCapacity: true)
            if segmenter.isOpen, let at = handler.splitPosition(newest: newest) {
                let cut = min(at, newest)
                try act(segmenter.split(at: cut, next: cut - preRoll))
            }
            try act(segmenter.advance(to: newest))
            if !ending.stopped { handler.advanced(to: newest) }
        }
        if !ending.stopped {
            try act(source.endFinishesSpeech ? segmenter.endOfStream() : segmenter.stop())
        }
        return ending
    }
}

/// One utterance decoded by a plain `UtteranceDecoder`.
public struct DecodedUtterance<Result> {
    /// The decoder input (lead-in included), as stream positions.
    public var range: Range<Int64>
    /// Where the speech itself started.
    public var speech: Int64
    public var result: Result
}

extension DecodedUtterance: Sendable where Result: Sendable {}

/// Drives one `UtteranceDecoder` with the segmenter's decisions: every
/// utterance goes to it, with the same phrase rules.
public final class DecoderUtterances<Decoder: UtteranceDecoder>: UtteranceHandler {
    public let decoder: Decoder
    public let phraseRules: PhraseRules
    private var speech: Int64 = 0

    public init(_ decoder: Decoder, rules: PhraseRules = .all) {
        self.decoder = decoder
        phraseRules = rules
    }

    public func begin(start: Int64, speech: Int64) {
        self.speech = speech
        decoder.begin()
    }
    public func feed(_ samples: [Int16]) { decoder.feed(samples) }
    public func phraseProgress() throws -> PhraseProgress { try decoder.phraseProgress() }
    public func finish(_ utterance: Range<Int64>, newest: Int64, samples: () -> [Int16],
                       audio: (Range<Int64>) -> [Int16]?) throws -> DecodedUtterance<Decoder.Result>? {
        DecodedUtterance(range: utterance, speech: speech, result: try decoder.finish())
    }
    public func cancel() { decoder.cancel() }
}
