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
public final class DenoisedCommandDecoder: CommandDecoding {
    public let base: any CommandDecoding
    public let denoiser: NeuralDenoiser
    /// The utterance as fed, before the network: its SNR goes into the
    /// result (`RejectionEvidence.inputSNR`), since the decoder's own
    /// estimate is of the denoised audio.
    private var raw: [Int16] = []

    public init(_ base: any CommandDecoding, denoiser: NeuralDenoiser) {
        self.base = base
        self.denoiser = denoiser
    }

    public func begin() {
        raw.removeAll(keepingCapacity: true)
        denoiser.begin()
        base.begin()
    }

    public func feed(_ samples: [Int16]) {
        raw.append(contentsOf: samples)
        let clean = denoiser.process(samples)
        if !clean.isEmpty { base.feed(clean) }
    }

    /// Of the words decoded so far: at most the network's delay (about
    /// 30 ms) behind what was fed.
    public func phraseProgress() throws -> PhraseProgress { try base.phraseProgress() }

    public func finish() throws -> CommandResult {
        let rest = denoiser.finish()
        if !rest.isEmpty { base.feed(rest) }
        return Self.noting(inputSNR: RejectionPolicy.estimatedSNR(raw), in: try base.finish())
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
        base.cancel()
    }

    public func update(model: PhraseModel, graph: WordGraph) throws { try base.update(model: model, graph: graph) }

    public func recognize(_ samples: [Int16]) throws -> CommandResult {
        Self.noting(inputSNR: RejectionPolicy.estimatedSNR(samples), in: try base.recognize(denoiser.denoise(samples)))
    }
}
