import ParleyCore
import ParleyDenoise

/// The command decoders' input through the neural noise suppressor
/// (`speech.front_end: neural`): a decoder in front of another that
/// denoises each utterance it is fed, from its first sample (the lead-in
/// before the speech included, which also lets the network settle on the
/// room's noise before the first word) to its end.
///
/// It runs only on what reaches the command decoders: the listener starts
/// them at an utterance's onset in the default mode and, in named mode,
/// only once the wake word was proposed (`WakeGate`), so idle audio, the
/// endpointer and the wake detector never pay for the network.
///
/// What it feeds on lags by the network's delay (`NeuralDenoiser`); at the
/// end the rest is pushed out before the inner decoder finishes, so the
/// decoder hears the whole utterance, aligned and of the same length.
///
/// With `corroborating`, an app intent that rule would ask back is decoded a
/// second time, by the same decoders, from the utterance as fed (before the
/// network, in the same pieces: what `speech.front_end: none` would have
/// decoded); when that decode gives the same command, the result is marked
/// `RejectionEvidence.corroborated` and not asked. The network and the
/// plain decoder err differently in noise (at 6 dB: 85.6% and 64.0% of the
/// development orders right), so their agreement is evidence neither
/// ratio carries. It costs a second decode of the utterance at its end,
/// only for those commands: sure ones and rejected ones go as before.
public final class DenoisedCommandDecoder: CommandDecoding {
    public let base: any CommandDecoding
    public let denoiser: NeuralDenoiser
    /// The ask rule whose unsure commands are decoded again without the
    /// network; nil: none are.
    public let corroborating: AskRule?
    /// Every accepted app intent is decoded again, not only the unsure
    /// ones, and marked when the plain decode agrees (the decisions are the
    /// same: `AskRule.asks` reads the mark only where it would ask). For
    /// evaluation: `parley understand --corroborate always` gives the
    /// agreement of every order, so that the ask rule's lines can be chosen
    /// on folds through this very path (training/parley_training/ask_neural.py).
    public var corroboratesAll = false
    /// The utterance as fed, before the network: its SNR goes into the
    /// result (`RejectionEvidence.inputSNR`), since the decoder's own
    /// estimate is of the denoised audio.
    private var raw: [Int16] = []
    /// Where each piece fed ends in `raw`: the plain decode is fed the same pieces.
    private var pieceEnds: [Int] = []
    /// The last `tailSamples` of what the base decoders heard (denoised):
    /// decoded after the plain one to bring the library's own state back
    /// (`StreamingCommandDecoder.decodeAside`).
    private var heard: [Int16] = []
    static let tailSamples = PCMAudio.sampleRate

    public init(_ base: any CommandDecoding, denoiser: NeuralDenoiser, corroborating: AskRule? = nil) {
        self.base = base
        self.denoiser = denoiser
        self.corroborating = corroborating
    }

    public func begin() {
        raw.removeAll(keepingCapacity: true)
        pieceEnds.removeAll(keepingCapacity: true)
        heard.removeAll(keepingCapacity: true)
        denoiser.begin()
        base.begin()
    }

    public func feed(_ samples: [Int16]) {
        raw.append(contentsOf: samples)
        pieceEnds.append(raw.count)
        let clean = denoiser.process(samples)
        if !clean.isEmpty {
            base.feed(clean)
            keep(clean)
        }
    }

    private func keep(_ clean: [Int16]) {
        heard.append(contentsOf: clean)
        if heard.count > 2 * Self.tailSamples { heard.removeFirst(heard.count - Self.tailSamples) }
    }

    private var tail: [Int16] { Array(heard.suffix(Self.tailSamples)) }

    /// Of the words decoded so far: at most the network's delay (about
    /// 30 ms) behind what was fed.
    public func phraseProgress() throws -> PhraseProgress { try base.phraseProgress() }

    public func finish() throws -> CommandResult {
        let rest = denoiser.finish()
        if !rest.isEmpty {
            base.feed(rest)
            keep(rest)
        }
        let result = Self.noting(inputSNR: RejectionPolicy.estimatedSNR(raw), in: try base.finish())
        return corroborated(result) {
            var start = 0
            let pieces = self.pieceEnds.map { end in
                defer { start = end }
                return Array(self.raw[start..<end])
            }
            return try self.base.decodeAside(pieces, resettling: self.tail)
        }
    }

    /// `result`, marked corroborated when it is an app intent that
    /// `corroborating` would ask back and `plain` (the utterance decoded
    /// without the network) gives the same intent with the same slot
    /// values. Built-ins, answers, custom phrases and shortcuts are not
    /// corroborated: they are short phrases ("turn it up", "stop it") that
    /// other speech is forced into alike by both decodes (of the 1,155
    /// other wake words at 6 dB, every agreement the ask rule would have
    /// asked was a built-in), where an order's many words agreeing is
    /// evidence. A plain decode that fails leaves the result as it was
    /// (asked back): the second opinion is never a reason to lose the command.
    func corroborated(_ result: CommandResult, plain: () throws -> CommandResult) -> CommandResult {
        guard let rule = corroborating, let match = result.match, case .intent = match.target,
              corroboratesAll || rule.asks(result),
              let other = try? plain().match, other.target == match.target, other.slots == match.slots else { return result }
        var result = result
        result.evidence?.corroborated = true
        return result
    }

    /// `result` with the SNR of the audio before the network.
    static func noting(inputSNR: Double, in result: CommandResult) -> CommandResult {
        var result = result
        result.evidence?.inputSNR = inputSNR
        return result
    }

    public func cancel() {
        // The denoiser's next `begin` drops whatever of this utterance is
        // still inside the network.
        raw.removeAll(keepingCapacity: true)
        pieceEnds.removeAll(keepingCapacity: true)
        heard.removeAll(keepingCapacity: true)
        base.cancel()
    }

    public func update(model: PhraseModel, graph: WordGraph) throws { try base.update(model: model, graph: graph) }

    /// The plain decode: the pieces as they are, without the network, by
    /// the base decoders with the asides' own normalisation (what
    /// corroboration decodes).
    public func decodeAside(_ pieces: [[Int16]], resettling tail: [Int16]) throws -> CommandResult {
        try base.decodeAside(pieces, resettling: tail)
    }

    public func recognize(_ samples: [Int16]) throws -> CommandResult {
        let clean = denoiser.denoise(samples)
        let result = Self.noting(inputSNR: RejectionPolicy.estimatedSNR(samples), in: try base.recognize(clean))
        return corroborated(result) { try self.base.decodeAside([samples], resettling: Array(clean.suffix(Self.tailSamples))) }
    }
}
