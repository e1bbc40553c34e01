import Foundation
import ParleyCore

/// Open-text answers ("What should the note say?"): PocketSphinx with the
/// generic en-us trigram model and the full CMU dictionary. The one place
/// Parley accepts free dictation (docs/spec.md §3: only when an intent asks for open
/// text); everything else is matched against grammars. Streams like
/// `StreamingCommandDecoder`: fed while the person speaks, on its own thread.
///
/// Use from one thread: `begin`, `feed`*, `finish` (or `cancel`) per utterance.
public final class DictationDecoder {
    public static let languageModel = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"

    /// Beams for a 130,000-word search: the library's own (the command
    /// stage's very wide beams are affordable only on small grammars).
    public static var settings: DecoderSettings {
        var settings = DecoderSettings.libraryDefaults
        settings.removeNoise = true
        return settings
    }

    private let worker: DecoderWorker
    private let failure = StreamError()
    private var inUtterance = false

    public init(settings: DecoderSettings = DictationDecoder.settings, languageModel: String = DictationDecoder.languageModel) throws {
        let decoder = try SphinxDecoder(settings: settings, languageModel: languageModel)
        worker = DecoderWorker(decoder: decoder, name: "parley-dictation")
    }

    deinit { worker.stop() }

    /// Starts an utterance (ps_start_utt).
    public func begin() {
        if inUtterance { cancel() }
        inUtterance = true
        failure.reset()
        let failure = self.failure
        worker.submit { decoder in failure.record { try decoder.startUtterance() } }
    }

    /// Queues more of the utterance (16 kHz mono); returns at once.
    public func feed(_ samples: [Int16]) {
        guard inUtterance, !samples.isEmpty else { return }
        let failure = self.failure
        worker.submit { decoder in failure.record { try decoder.process(samples) } }
    }

    /// Ends the utterance without a result.
    public func cancel() {
        guard inUtterance else { return }
        inUtterance = false
        _ = try? worker.async { decoder in try decoder.endUtterance() }.wait()
    }

    /// Ends the utterance; the words heard ("" for none). Blocks until decoded.
    public func finish() throws -> String {
        precondition(inUtterance, "finish() without begin()")
        inUtterance = false
        let words = try worker.async { decoder -> String in
            try decoder.endUtterance()
            return decoder.hypothesis()?.transcript ?? ""
        }.wait()
        try failure.check()
        return words
    }

    /// Open text has no phrases to complete: a whole phrase that may go on
    /// (the utterance ends at the trailing silence).
    public func phraseProgress() -> PhraseProgress { .extendable }

    /// Decodes a whole recording (tests, benchmarks).
    public func transcribe(_ samples: [Int16]) throws -> String {
        try decode(samples)
    }
}

/// The listening driver's decoder for open-text answers.
extension DictationDecoder: UtteranceDecoder {}
