import Foundation
import ParleyControl
import ParleyDenoise

// What the daemon and `parley status` read of listening (`RecogniserPort`,
// `AudioPort`), and the neural front end made for the listen thread.
extension ListeningPipeline {
    public func recognitions() async -> Int { shared.withLock { $0.recognitions } }

    public func frontEndStatus() async -> String? {
        shared.withLock { $0.frontEnd } ?? frontEnd.description
    }

    /// The neural noise suppressor (`speech.front_end: neural`), made once
    /// on the listen thread; nil in other modes, or when it cannot run: a
    /// missing or corrupt model or a runtime that does not load is one line
    /// in the journal and in `parley status`, and listening goes on without it.
    func makeNeuralDenoiser() -> NeuralDenoiser? {
        guard frontEnd.isNeural else { return nil }
        do {
            let denoiser = try NeuralDenoiser(settings: frontEnd)
            shared.withLock { $0.frontEnd = "\(frontEnd) (DeepFilterNet3, on commands; \(denoiser.assets.library))" }
            return denoiser
        } catch {
            logger.error("capture front end '\(frontEnd)' unavailable: \(error); listening without it")
            shared.withLock { $0.frontEnd = "\(frontEnd) unavailable (\(error)); listening without it" }
            return nil
        }
    }
    /// Utterances ended since start, those decided (handed
    /// to the engine or rejected), and samples lost because the listen
    /// thread fell more than the ring's length behind.
    public var listeningCounts: (segments: Int, decided: Int, lostSamples: Int64) {
        shared.withLock { ($0.segments, $0.recognitions + $0.rejections, $0.lostSamples) }
    }
    /// Phrases of the grammar the next utterance is decoded with (the one
    /// the recogniser loads at its start; while the device speaks, the
    /// barge-in grammar it holds): a phrase just added counts once its
    /// grammar is compiled and installed, so a client can wait for that.
    public func grammarSize() async -> Int {
        if isSpeaking() { return shared.withLock { $0.grammarSize } }
        return grammars.current.model.rules.count
    }

    public func audioStatus() async -> AudioStatus {
        AudioStatus(
            capture: capture.configuration.device.name, playback: playbackName,
            state: capture.status.state.description, overruns: capture.status.overruns, problem: capture.problem,
            speaking: isSpeaking())
    }
}
