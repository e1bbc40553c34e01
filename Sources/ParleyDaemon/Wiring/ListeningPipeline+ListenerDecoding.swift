import Foundation
import ParleyCore
import ParleySpeech

// Decoding an ended utterance (`Listener.finish`): the streamed result, or
// the buffered audio again with a newer grammar, the gate's held pieces, a
// command joined with the wake word before a pause, dictation.
extension ListeningPipeline.Listener {
    /// The rejected utterance `before` (the wake word, then a pause) and
    /// `utterance` decoded as one, when the source still holds both and
    /// the two together are understood; nil otherwise (the result of
    /// `utterance` alone stands).
    func rejoined(_ before: Range<Int64>, _ utterance: Range<Int64>,
                          audio: (Range<Int64>) -> [Int16]?) -> CommandResult? {
        guard let samples = audio(before.lowerBound..<utterance.upperBound) else { return nil }
        do {
            let joined = try recognizer.recognize(samples)
            guard joined.match != nil, joined.rejection == nil else { return nil }
            pipeline.logger.debug("joined with the wake word before a pause", metadata: [
                "heard": "\(joined.transcript)", "start-sample": "\(before.lowerBound)",
            ])
            return joined
        } catch {
            pipeline.logger.error("recognition failed: \(error)")
            return nil
        }
    }

    /// The command decoder's result and, when the outcome needs it, the
    /// dictated text; nil when recognition failed (logged). When the
    /// engine changed the grammar while the person spoke (a question
    /// was asked meanwhile), the streamed decode used the old one: the
    /// buffered utterance is decoded again with the new grammar.
    func decode(_ streamedKind: ListeningKind, afterWake: Bool, samples: () -> [Int16])
        -> (kind: ListeningKind, command: CommandResult, dictated: String?)? {
        var kind = streamedKind
        var command: CommandResult
        var dictated: String?
        // Never heard by the command decoders (`WakeGate`): decoded again
        // with a newer grammar (a rare path: the grammar changed while
        // it was spoken) unless that one still needs the wake phrase and
        // the gate would not decode it at its end either (too long to be
        // a command, or said in a quiet room), as `decodeHeld` decides:
        // asked only on that path, of the gate as it is now, before the
        // end's decode takes its pieces.
        let unheard = undecoded, heldGate = gate
        func again(_ buffered: [Int16]) throws -> CommandResult {
            let decodable = heldGate?.decodesAtEnd() ?? true
            return unheard && !decodable && kind == .commands ? Self.noWakePhrase : try recognizer.recognize(buffered)
        }
        do {
            if kind == .commands && afterWake {
                awaitGrammar("the window's grammar after the wake word") { $0.current.kind == .window }
            }
            if kind != .bargeIn && isStale {
                cancel()
                kind = prepare(speaking: false)
                let buffered = samples()
                command = try again(buffered)
                if ListeningOutcome.needsDictation(kind: kind, command: command), let dictation {
                    dictated = try? transcribe(buffered, with: dictation)
                }
            } else {
                command = unheard ? try decodeHeld() : try recognizer.finish()
                gate = nil
                if kind == .dictation, let dictation {
                    if ListeningOutcome.needsDictation(kind: kind, command: command) {
                        dictated = try? finishDictation(dictation)
                    } else {
                        dictation.cancel()
                    }
                } else if kind != .bargeIn && (command.match == nil || command.rejection != nil) && pipeline.grammars.isCompiling {
                    // Nothing matched while a newer grammar compiles (a
                    // shortcut or app just added, a question just asked):
                    // the words may be in it, so they are decoded again with it.
                    awaitGrammar("the grammar being compiled") { !$0.isCompiling }
                    if isStale {
                        kind = prepare(speaking: false)
                        command = try again(samples())
                    }
                }
            }
        } catch {
            cancel()
            pipeline.logger.error("recognition failed: \(error)")
            return nil
        }
        return (kind, command, dictated)
    }

    /// An utterance whose wake phrase was never proposed, at its end:
    /// decoded from the gate's held pieces when short enough to be a
    /// command and the detector's rule allows it (`WakeGate.remainder`:
    /// noisy, or for the hey gate any), else rejected undecoded.
    private func decodeHeld() throws -> CommandResult {
        guard let pieces = gate?.remainder() else { return Self.noWakePhrase }
        pipeline.logger.debug("decoded at its end: the gate never opened on it", metadata: [
            "held-samples": "\(pieces.reduce(0) { $0 + $1.count })",
        ])
        startCommands(with: pieces)
        return try recognizer.finish()
    }

    /// Starts the command decoders on an utterance the gate held, fed
    /// in the pieces it came in (what they would have seen from its start).
    func startCommands(with held: [[Int16]]) {
        recognizer.begin()
        for piece in held { recognizer.feed(piece) }
    }

    private func transcribe(_ samples: [Int16], with dictation: any UtteranceDecoder<String>) throws -> String {
        do { return try dictation.decode(samples) } catch {
            pipeline.logger.error("dictation failed: \(error)")
            throw error
        }
    }

    private func finishDictation(_ dictation: any UtteranceDecoder<String>) throws -> String {
        do { return try dictation.finish() } catch {
            pipeline.logger.error("dictation failed: \(error)")
            throw error
        }
    }
}
