import Foundation
import ParleyConfiguration
import ParleyCore
import ParleySpeech
import ServiceLifecycle

// The grammar of the moment: asked for by the engine (`listen`), with the
// wake settings (`setWake`), and the command stage's rejection threshold.
extension ListeningPipeline {
    /// The command stage's rejection threshold for a wake sensitivity: the
    /// recogniser's default (-1.0, per-frame log-likelihood ratio to the
    /// phone loop) at 0.5, stricter by 1.0 at 0, looser by 1.0 at 1.
    static func rejectionThreshold(sensitivity: Double) -> Double {
        -1.0 + (0.5 - min(1, max(0, sensitivity))) * 2
    }

    /// The command decoder's threshold at the configured sensitivity.
    var rejectionThreshold: Double { Self.rejectionThreshold(sensitivity: wake.sensitivity) }

    /// Called for the engine's `.listening` events. Returns once the grammar
    /// (or a newer one) is what the listen thread uses, or at once when the
    /// calling task is cancelled or stopping, or listening stops: the compile
    /// runs on ``GrammarBuilds``' queue, never in the asking task, so no
    /// service's stop waits for it; nor on the listen thread, which only
    /// swaps the compiled graph in (listening never waits for a build, docs/spec.md §3).
    public func listen(_ mode: ListeningMode) async {
        // A stop cancels the open conversation (ConversationStopper), and the
        // engine then asks for the commands grammar again. Nothing will be
        // listened for any more, and compiling it takes 5-6 s on a slow CPU
        // (qemu-user, a Pi 3): not even asked for. The request runs in the
        // stopping service's task, so its graceful shutdown flag is what says
        // the daemon is stopping.
        guard !Task.isShuttingDownGracefully else {
            logger.debug("listening grammar not rebuilt: parleyd is stopping", metadata: ["mode": "\(mode)"])
            return
        }
        let commands = await engine.phraseModel()
        let (model, kind): (PhraseModel, Kind) = switch mode {
        case .commands: (wakeGrammar.commands(commands), .commands)
        case .window: (wakeGrammar.window(commands), .window)
        case .followUp(let answers): (answers, .followUp)
        case .dictation(let answers): (answers, .dictation)
        }
        guard let version = grammars.request(model, kind: kind) else { return }
        if await !grammars.wait(for: version) {
            logger.debug("stopped waiting for the listening grammar", metadata: ["mode": "\(mode)", "version": "\(version)"])
        }
    }

    /// What is listened for while the device speaks: the cancel phrases;
    /// with its voice cancelled, also the wake words and a command.
    func bargeInModel(_ wake: WakeGrammar, commands: PhraseModel) -> PhraseModel {
        echo == nil ? wake.bargeIn : wake.bargeIn(commands: commands)
    }

    /// Puts new wake settings in use while listening (the page's wake word
    /// and sensitivity): the grammar of the moment is asked for again with
    /// the new wake words, and the listen thread makes its decoders again
    /// (the wake detector's phrase and threshold, the command stage's
    /// rejection threshold) before the next utterance, from the ring: what
    /// is said meanwhile is heard with the new ones. Returns once the new
    /// grammar is the one in use, as `listen` does.
    public func setWake(_ new: ParleyConfig.Wake) async {
        let commands = await engine.phraseModel()
        let grammar = new.grammar
        let bargeIn = bargeInModel(grammar, commands: commands)
        let changed = wakeState.withLock { state -> Bool in
            guard state.wake != new else { return false }
            state = WakeState(wake: new, grammar: grammar, bargeIn: bargeIn, generation: state.generation + 1)
            return true
        }
        guard changed else { return }
        logger.notice("wake settings changed: listening again with them", metadata: [
            "name": "\(new.name)", "named": "\(new.named)", "direct": "\(new.direct)", "sensitivity": "\(new.sensitivity)",
        ])
        await listen(await engine.listeningMode)
    }
}
