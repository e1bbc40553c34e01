import ParleyCore

/// An `UtteranceDecoder` that decodes nothing: each utterance's phrase
/// progress and result come from a script, and everything the listening
/// path asked of it is recorded. Drives the listening driver (and the
/// pipeline's decisions) in tests without espeak-ng or PocketSphinx.
/// Not thread-safe: use from the one thread that drives it, as real decoders.
open class ScriptedDecoder<Result>: UtteranceDecoder {
    /// One utterance's part of the script.
    public struct Line {
        /// The answer to each phrase check, by how many samples were fed.
        public var progress: (_ fed: Int) -> PhraseProgress
        public var result: Result

        public init(progress: @escaping (_ fed: Int) -> PhraseProgress, result: Result) {
            self.progress = progress
            self.result = result
        }

        /// The same answer to every phrase check.
        public init(_ progress: PhraseProgress, _ result: Result) {
            self.init(progress: { _ in progress }, result: result)
        }
    }

    /// What one utterance was given.
    public struct Utterance: Equatable {
        /// Samples fed, and the value of each (for tests that check what was fed).
        public var fed: [Int16] = []
        public var phraseChecks = 0
        /// Finished (true), cancelled (false) or still open (nil).
        public var finished: Bool?
    }

    private var script: [Line]
    /// The line used once the script is used up.
    private let otherwise: Line
    /// Every utterance begun, in order.
    public private(set) var utterances: [Utterance] = []
    private var isOpen = false

    /// `script`: the lines of the first utterances in order; `otherwise`: every later one's.
    public init(_ script: [Line] = [], otherwise: Line) {
        self.script = script
        self.otherwise = otherwise
    }

    /// Utterances finished (not cancelled).
    public var finishedCount: Int { utterances.filter { $0.finished == true }.count }

    private var line: Line { utterances.count <= script.count ? script[utterances.count - 1] : otherwise }

    public func begin() {
        if isOpen { cancel() }
        isOpen = true
        utterances.append(Utterance())
    }

    public func feed(_ samples: [Int16]) {
        guard isOpen else { return }
        utterances[utterances.count - 1].fed += samples
    }

    public func phraseProgress() throws -> PhraseProgress {
        guard isOpen else { return .incomplete }
        utterances[utterances.count - 1].phraseChecks += 1
        return line.progress(utterances[utterances.count - 1].fed.count)
    }

    open func finish() throws -> Result {
        precondition(isOpen, "finish() without begin()")
        isOpen = false
        utterances[utterances.count - 1].finished = true
        return line.result
    }

    public func cancel() {
        guard isOpen else { return }
        isOpen = false
        utterances[utterances.count - 1].finished = false
    }
}
