import Foundation
import ParleyCore

/// A dedicated thread that owns one `SphinxDecoder` and runs jobs on it in
/// the order they were submitted. PocketSphinx calls block for as long as the
/// search takes, so they never run on the Swift cooperative pool.
final class DecoderWorker: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`:
    private var jobs: [(SphinxDecoder) -> Void] = []
    private var running = true
    private var finished = false
    /// Touched only by the worker thread once it runs.
    private let decoder: SphinxDecoder

    init(decoder: SphinxDecoder, name: String) {
        self.decoder = decoder
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty && running { condition.wait() }
            if jobs.isEmpty {
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job(decoder)
        }
    }

    /// Queues `job`; returns at once.
    func submit(_ job: @escaping (SphinxDecoder) -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Queues `job` and returns a handle that waits for its result.
    func async<T>(_ job: @escaping (SphinxDecoder) throws -> T) -> Pending<T> {
        let pending = Pending<T>()
        submit { decoder in pending.fulfil(Result { try job(decoder) }) }
        return pending
    }

    /// Runs the queued jobs, then ends the thread and waits for it.
    func stop() {
        condition.lock()
        running = false
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// A job's result, delivered once from the worker thread.
    final class Pending<T>: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private var result: Result<T, Error>?
        fileprivate func fulfil(_ value: Result<T, Error>) {
            result = value
            semaphore.signal()
        }
        /// Blocks the calling thread until the job has run.
        func wait() throws -> T {
            semaphore.wait()
            return try result!.get()
        }
    }
}

/// Recognises a command while it is being spoken: the audio goes to two
/// decoders on two dedicated threads as it arrives (ps_process_raw), one
/// searching the command grammar and one the free phone loop that rejection
/// compares it with, so at the end of the utterance only ps_end_utt and the
/// scoring remain. Scoring, matching and rejection are those of
/// `CommandRecognizer` (the same grammar, phone loop, settings and
/// threshold); the phone loop gets its own decoder so both searches run at
/// once instead of one after the other.
///
/// Use from one thread: `begin`, `feed`*, `finish` (or `cancel`) per
/// utterance; `update(model:)` between utterances.
public final class StreamingCommandDecoder {
    public private(set) var model: PhraseModel
    public let rejection: RejectionModel?
    /// Minimum `CommandResult.confidence`; below it the speech is rejected
    /// (default: `CommandRecognizer`'s).
    public let threshold: Double
    /// Relaxes `threshold` for noisy utterances, as `CommandRecognizer` does.
    public var policy = RejectionPolicy()
    /// The current utterance as fed, for the policy's SNR estimate.
    private var fedSamples: [Int16] = []
    private let commands: DecoderWorker
    private let garbage: DecoderWorker?
    private var matcher: PhraseMatcher
    /// The grammar's word graph, indexed for `phraseProgress()`.
    private var progressIndex: PhraseProgressIndex
    private var commandSearch = "command0"
    private var grammarVersion = 0
    private var inUtterance = false
    /// The first error of the current utterance's streamed jobs (set on a
    /// worker thread, read after `finish` waited for both).
    private let streamError = StreamError()
    /// Rejection while spoken for the utterances begun from now on (nil:
    /// off, as in the daemon: `EarlyRejection` says why).
    public var earlyRejection: EarlyRejection?
    /// Whether each word's lattice posterior is computed
    /// (`RejectionEvidence.WordEvidence.posterior`; nil when off). Off by
    /// default, as in the daemon: building the grammar search's lattice
    /// took 0.3 to 12 s per utterance in kitchen noise at 6 dB (60 ms median
    /// clean) on top of the answer's latency, and the shipped ask rule does
    /// not read it. `parley understand --word-posteriors on` measures it.
    public var measuresWordPosteriors = false
    /// The current utterance's early rejection, fixed at `begin`.
    private var looking: EarlyRejection?
    private var nextLook = 0
    private var looks: [PartialLook] = []
    /// Set when the utterance was given up while spoken: both decoders have
    /// ended it, the rest of it is not decoded, and `finish` returns this.
    private var gaveUp: CommandResult?

    public convenience init(model: PhraseModel, settings: DecoderSettings = DecoderSettings(),
                            rejection: RejectionModel? = RejectionModel(), threshold: Double = -1.0) throws {
        try self.init(model: model, graph: GrammarCompiler().graph(for: model), settings: settings,
                      rejection: rejection, threshold: threshold)
    }

    /// With the model's graph already compiled (parleyd keeps it as the
    /// grammar to come back to; compiling twice costs seconds on a slow board).
    public init(model: PhraseModel, graph: WordGraph, settings: DecoderSettings = DecoderSettings(),
                rejection: RejectionModel? = RejectionModel(), threshold: Double = -1.0) throws {
        let commandDecoder = try SphinxDecoder(settings: settings, words: graph.words)
        try commandDecoder.setGrammar(name: commandSearch, graph: graph)
        try commandDecoder.use(commandSearch)
        commands = DecoderWorker(decoder: commandDecoder, name: "parley-decode-command")
        if let rejection {
            let loop = GrammarCompiler.phoneLoop(rejection)
            var loopSettings = settings
            if let ds = settings.loopDownsampling { loopSettings.downsampling = ds }
            let loopDecoder = try SphinxDecoder(settings: loopSettings, words: loop.words)
            try loopDecoder.setGrammar(name: CommandRecognizer.garbageSearch, graph: loop)
            try loopDecoder.use(CommandRecognizer.garbageSearch)
            garbage = DecoderWorker(decoder: loopDecoder, name: "parley-decode-reject")
        } else {
            garbage = nil
        }
        self.model = model
        self.matcher = PhraseMatcher(model: model)
        self.progressIndex = PhraseProgressIndex(graph)
        self.rejection = rejection
        self.threshold = threshold
    }

    deinit {
        commands.stop()
        garbage?.stop()
    }

    private var workers: [DecoderWorker] { [commands] + (garbage.map { [$0] } ?? []) }

    /// Replaces the phrase model between utterances. The new grammar is
    /// registered under a fresh name before the old one is dropped, so a
    /// failure leaves the previous grammar working.
    public func update(model: PhraseModel) throws {
        try update(model: model, graph: GrammarCompiler().graph(for: model))
    }

    /// `update(model:)` with the model's graph already compiled (elsewhere,
    /// so the listening thread only swaps it in).
    public func update(model: PhraseModel, graph: WordGraph) throws {
        precondition(!inUtterance, "update(model:) during an utterance")
        grammarVersion += 1
        let name = "command\(grammarVersion)"
        let old = commandSearch
        try commands.async { decoder in
            try decoder.setGrammar(name: name, graph: graph)
            try decoder.use(name)
            decoder.removeSearch(old)
        }.wait()
        commandSearch = name
        self.model = model
        self.matcher = PhraseMatcher(model: model)
        self.progressIndex = PhraseProgressIndex(graph)
    }

    /// Starts an utterance (ps_start_utt on both decoders).
    public func begin() {
        if inUtterance { cancel() }
        inUtterance = true
        fedSamples.removeAll(keepingCapacity: true)
        looking = garbage == nil ? nil : earlyRejection
        nextLook = looking?.firstLookSamples ?? 0
        looks.removeAll(keepingCapacity: true)
        gaveUp = nil
        streamError.reset()
        let failure = streamError
        for worker in workers {
            worker.submit { decoder in failure.record { try decoder.startUtterance() } }
        }
    }

    /// Queues more of the utterance (16 kHz mono Int16) for both decoders; returns at once.
    public func feed(_ samples: [Int16]) {
        guard inUtterance, gaveUp == nil, !samples.isEmpty else { return }
        fedSamples.append(contentsOf: samples)
        let failure = streamError
        for worker in workers {
            worker.submit { decoder in failure.record { try decoder.process(samples) } }
        }
        if let looking, fedSamples.count >= nextLook {
            nextLook = fedSamples.count + looking.intervalSamples
            look(looking)
        }
    }

    /// Compares the words finished so far with the phone loop (both
    /// decoders caught up first: the listen thread waits for at most the
    /// last block's decoding) and gives the utterance up when they are
    /// `margin` below the threshold. A failed look leaves the utterance to
    /// `finish`, which reports the error.
    private func look(_ rule: EarlyRejection) {
        guard let garbage else { return }
        let command = commands.async { decoder in decoder.segments() }
        let loop = garbage.async { decoder in decoder.segments() }
        guard let words = try? command.wait(), let loopWords = try? loop.wait() else { return }
        let snr = RejectionPolicy.estimatedSNR(fedSamples)
        let line = policy.threshold(base: threshold, snr: snr)
        guard let evidence = CommandScoring.partialEvidence(words, loop: loopWords, threshold: line, snr: snr) else { return }
        let margin = evidence.ratio - line
        looks.append(PartialLook(fedSamples: fedSamples.count, margin: margin))
        guard let limit = rule.margin, margin < -limit else { return }
        // The words so far, for the rejection's transcript: fetched only here,
        // since most looks give nothing up.
        let transcript = (try? commands.async { decoder in decoder.hypothesis()?.transcript ?? "" }.wait()) ?? ""
        let ends = workers.map { $0.async { decoder in try decoder.endUtterance() } }
        for end in ends { _ = try? end.wait() }
        var result = CommandResult(
            transcript: transcript, confidence: evidence.ratio, match: nil,
            rejection: String(format: "given up while spoken: confidence %.3f below %.3f by more than %.2f", evidence.ratio, line, limit),
            evidence: evidence)
        result.looks = looks
        gaveUp = result
    }

    /// Blocks until both decoders have processed everything fed so far.
    public func waitUntilFed() throws {
        let pendings = workers.map { $0.async { _ in } }
        for p in pendings { try p.wait() }
        try streamError.check()
    }

    /// How far the words recognised so far (the search's best path at the
    /// newest frame, ps_get_hyp mid-utterance) have come through the
    /// grammar: not yet a phrase, a whole phrase the grammar can extend, or
    /// a complete one. Waits until the command decoder has processed
    /// everything fed. The listening path uses it to tell a pause inside a
    /// command ("a large … latte") from its end, and to end a complete
    /// command without waiting for the trailing silence.
    public func phraseProgress() throws -> PhraseProgress {
        // Given up: never a phrase, so the utterance is held across short
        // pauses as a forced one was, and ends at a long one (or its length bound).
        guard inUtterance, gaveUp == nil else { return .incomplete }
        let words = try commands.async { decoder in decoder.hypothesis()?.words ?? [] }.wait()
        try streamError.check()
        return progressIndex.progress(words)
    }

    /// Ends the utterance without a result.
    public func cancel() {
        guard inUtterance else { return }
        inUtterance = false
        if gaveUp != nil {
            gaveUp = nil  // both decoders ended it already
            return
        }
        let pendings = workers.map { $0.async { decoder in try decoder.endUtterance() } }
        for p in pendings { _ = try? p.wait() }
    }

    /// Ends the utterance and scores it; blocks until both decoders are done.
    public func finish() throws -> CommandResult {
        precondition(inUtterance, "finish() without begin()")
        inUtterance = false
        if let gaveUp {
            self.gaveUp = nil
            return gaveUp
        }
        let measures = measuresWordPosteriors
        let command = commands.async { decoder -> (Hypothesis?, [SphinxDecoder.Segment], [Double?]?) in
            try decoder.endUtterance()
            guard let hyp = decoder.hypothesis() else { return (nil, [], nil) }
            let segments = decoder.segments()
            return (hyp, segments, measures ? decoder.wordPosteriors(segments) : nil)
        }
        let loop = garbage?.async { decoder -> [SphinxDecoder.Segment] in
            try decoder.endUtterance()
            return decoder.segments()
        }
        let (hyp, commandWords, posteriors) = try command.wait()
        let loopWords = try loop?.wait()
        try streamError.check()
        var result = score(hyp, commandWords: commandWords, loopWords: loopWords, samples: fedSamples, posteriors: posteriors)
        result.looks = looks
        return result
    }

    /// Decodes an utterance, fed in `pieces`, as `begin`, `feed` and
    /// `finish` would, with a live cepstral normalisation of its own: the
    /// running mean is carried from utterance to utterance, and audio of
    /// another kind (the utterance before the neural front end,
    /// `DenoisedCommandDecoder`) has another mean. So the asides carry
    /// theirs from one to the next (the first starts from the decoders'
    /// own), and the decoders' is put back after each, as it was.
    ///
    /// PocketSphinx's noise estimate (`-remove_noise`) and the acoustic
    /// model's frame-to-frame Gaussian selection are kept inside the library,
    /// which does not expose them, and the aside leaves them where its noisy
    /// audio took them: decoding every order aside that way cost 3 of 111
    /// orders at 18 dB. So `resettling` (the end of the utterance the
    /// decoders heard last, as they heard it) is decoded after the aside,
    /// its result dropped, to bring both back to that audio before the
    /// normalisation is put back.
    public func decodeAside(_ pieces: [[Int16]], resettling tail: [Int16]) throws -> CommandResult {
        if inUtterance { cancel() }
        let saved = try liveNormalisations()
        if let asideNormalisation { try setLiveNormalisations(asideNormalisation) }
        let result: Swift.Result<CommandResult, any Error> = Swift.Result {
            begin()
            for piece in pieces { feed(piece) }
            return try finish()
        }
        asideNormalisation = try? liveNormalisations()
        if !tail.isEmpty {
            try? setLiveNormalisations(saved)
            begin()
            feed(tail)
            _ = try? finish()
        }
        try? setLiveNormalisations(saved)
        return try result.get()
    }

    /// The asides' live normalisation, kept between them (`decodeAside`).
    private var asideNormalisation: [SphinxDecoder.LiveNormalisation?]?

    private func setLiveNormalisations(_ states: [SphinxDecoder.LiveNormalisation?]) throws {
        for (worker, state) in zip(workers, states) {
            try worker.async { $0.liveNormalisation = state }.wait()
        }
    }

    /// Both decoders' live normalisation now (tests compare it around `decodeAside`).
    func liveNormalisations() throws -> [SphinxDecoder.LiveNormalisation?] {
        try workers.map { worker in try worker.async { $0.liveNormalisation }.wait() }
    }

    /// Decodes a buffered utterance on both threads at once (whole-utterance
    /// ps_process_raw, as `CommandRecognizer.recognize`).
    public func recognize(_ samples: [Int16]) throws -> CommandResult {
        if inUtterance { cancel() }
        let measures = measuresWordPosteriors
        let command = commands.async { decoder -> (Hypothesis?, [SphinxDecoder.Segment], [Double?]?) in
            guard let hyp = try decoder.decode(samples) else { return (nil, [], nil) }
            let segments = decoder.segments()
            return (hyp, segments, measures ? decoder.wordPosteriors(segments) : nil)
        }
        let loop = garbage?.async { decoder -> [SphinxDecoder.Segment] in
            _ = try decoder.decode(samples)
            return decoder.segments()
        }
        let (hyp, commandWords, posteriors) = try command.wait()
        let loopWords = try loop?.wait()
        return score(hyp, commandWords: commandWords, loopWords: loopWords, samples: samples, posteriors: posteriors)
    }

    /// `CommandRecognizer.recognize`'s decision on the two searches' results.
    private func score(_ hyp: Hypothesis?, commandWords: [SphinxDecoder.Segment],
                       loopWords: [SphinxDecoder.Segment]?, samples: [Int16], posteriors: [Double?]?) -> CommandResult {
        CommandScoring.result(hyp, commandWords: commandWords, loopWords: loopWords, samples: samples,
                              threshold: threshold, policy: policy, matcher: matcher, posteriors: posteriors)
    }
}

/// The first error of an utterance's queued jobs, shared by the worker threads.
final class StreamError: @unchecked Sendable {
    private let lock = NSLock()
    private var error: Error?

    func reset() { lock.withLock { error = nil } }

    func record(_ body: () throws -> Void) {
        guard lock.withLock({ error == nil }) else { return }
        do { try body() } catch { lock.withLock { if self.error == nil { self.error = error } } }
    }

    func check() throws {
        if let error = lock.withLock({ error }) { throw error }
    }
}

/// What the daemon's listener needs of its command decoder: an utterance
/// streamed while spoken, a grammar swapped between utterances, and a
/// buffered utterance decoded again when the grammar changed while it was
/// spoken. PocketSphinx's `StreamingCommandDecoder` in the product,
/// scripted ones in tests.
public protocol CommandDecoding: UtteranceDecoder<CommandResult> {
    /// Replaces the grammar between utterances (the graph compiled elsewhere).
    func update(model: PhraseModel, graph: WordGraph) throws
    /// Decodes a buffered utterance (an open one is dropped).
    func recognize(_ samples: [Int16]) throws -> CommandResult
    /// Decodes an utterance fed in `pieces` as little changing what the
    /// next utterance starts from as it can (an open one is dropped);
    /// `resettling`: the end of the last utterance heard, as heard.
    func decodeAside(_ pieces: [[Int16]], resettling tail: [Int16]) throws -> CommandResult
}

extension CommandDecoding {
    /// For a decoder that carries nothing from one utterance to the next:
    /// `begin`, `feed` and `finish`.
    public func decodeAside(_ pieces: [[Int16]], resettling tail: [Int16]) throws -> CommandResult {
        begin()
        for piece in pieces { feed(piece) }
        return try finish()
    }
}

/// The listening driver's decoder: `begin`, `feed`, `phraseProgress`,
/// `finish` and `cancel` above.
extension StreamingCommandDecoder: CommandDecoding {}
