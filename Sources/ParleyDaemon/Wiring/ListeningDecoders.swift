import Foundation
import Logging
import ParleyConfiguration
import ParleyCore
import ParleySpeech
import ParleyWake

/// The decoders the daemon's listener drives: PocketSphinx's in the product
/// (`pocketSphinx(room:)`), scripted ones in tests.
public struct ListeningDecoders {
    public var command: any CommandDecoding
    /// Named mode's wake detector (nil: direct mode, "hey <phrase>" only).
    public var wake: (any WakeDecoding)?
    /// Loads the dictation decoder, the first time an open-text answer is expected.
    public var dictation: () throws -> any UtteranceDecoder<String>

    public init(command: any CommandDecoding, wake: (any WakeDecoding)?,
                dictation: @escaping () throws -> any UtteranceDecoder<String>) {
        self.command = command
        self.wake = wake
        self.dictation = dictation
    }

    /// Made on the listen thread from the grammar in use, its graph and the
    /// wake settings in force (made again when those change, `setWake`).
    public typealias Factory = @Sendable (_ initial: PhraseModel, _ graph: WordGraph, _ wake: ParleyConfig.Wake) throws
        -> ListeningDecoders

    /// Named mode's detector: the name's speech_embedding head (`wake.detector`
    /// embedding, where model/wake has one), else its keyword network
    /// (`network`, or an embedding head that is missing or unusable), else
    /// PocketSphinx's two stages. A network file that cannot be read is logged, naming the
    /// file and what is wrong, and PocketSphinx listens instead: the device
    /// stays wakeable.
    static func namedWake(_ wake: ParleyConfig.Wake, logger: Logger = Logger(label: "parley.wake"),
                          modelPath: (String) -> String? = KeywordModel.wakeModelPath(name:),
                          headPath: (String) -> String? = KeywordModel.wakeHeadPath(name:)) throws -> any WakeDecoding {
        if wake.detector == .embedding {
            if let path = headPath(wake.name) {
                do {
                    // The name's keyword network, where it has one, wakes the embedding.
                    return try EmbeddingWakeUtterance.load(head: path, networkPath: modelPath(wake.name), sensitivity: wake.sensitivity)
                } catch {
                    logger.error("wake word head unusable; the keyword network listens for the name: \(error)")
                }
            } else {
                logger.warning("no speech_embedding head for the wake name; the keyword network listens for it",
                               metadata: ["name": "\(wake.name)"])
            }
        }
        if wake.detector != .pocketsphinx {
            if let path = modelPath(wake.name) {
                do {
                    return KeywordWakeUtterance(KeywordSpotter(model: try KeywordModel.load(path), sensitivity: wake.sensitivity))
                } catch {
                    logger.error("wake word network unusable; PocketSphinx listens for the name: \(error)")
                }
            } else {
                logger.warning("no keyword network for the wake name; PocketSphinx listens for it", metadata: ["name": "\(wake.name)"])
            }
        }
        return WakeUtterance(try WakeDetector(mode: .named(wake.name, heyOptional: wake.heyOptional), sensitivity: wake.sensitivity))
    }

    /// With `wake.hey_gate` in direct mode, the "hey" head in front of the
    /// command decoders (`HeyGatedWake`), wrapping named mode's detector;
    /// a missing or unreadable head is logged and commands decode ungated.
    static func heyGated(_ named: (any WakeDecoding)?, _ wake: ParleyConfig.Wake,
                         logger: Logger = Logger(label: "parley.wake"),
                         headPath: (String) -> String? = KeywordModel.wakeHeadPath(name:)) throws -> (any WakeDecoding)? {
        guard wake.direct, wake.heyGate else { return named }
        guard let path = headPath("hey") else {
            logger.warning("no speech_embedding head for \"hey\" (model/wake/hey.embedding.json); direct commands decode ungated")
            return named
        }
        do {
            // The name's head has the models loaded already (about 92 M instructions to read and check).
            let weights = try (named as? EmbeddingWakeUtterance)?.spotter.weights
                ?? SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate())
            let hey = EmbeddingSpotter(model: try EmbeddingWakeModel.load(path), weights: weights)
            return HeyGatedWake(name: named, hey: hey)
        } catch {
            logger.error("the hey gate's head is unusable; direct commands decode ungated: \(error)")
            return named
        }
    }

    /// PocketSphinx: the streaming command decoder at the wake
    /// sensitivity's rejection threshold, the two-stage wake detector in
    /// named mode, the dictation decoder.
    /// The command and dictation decoders follow `room` (the household's
    /// transform, ``RoomLearning``); the wake detector never does.
    public static func pocketSphinx(room: RoomTransform.Slot? = nil) -> Factory {
        { initial, graph, wake in
            var settings = DecoderSettings()
            settings.room = room
            var dictationSettings = DictationDecoder.settings
            dictationSettings.room = room
            return ListeningDecoders(
                command: try StreamingCommandDecoder(
                    model: initial, graph: graph, settings: settings,
                    threshold: ListeningPipeline.rejectionThreshold(sensitivity: wake.sensitivity)),
                wake: try heyGated(wake.named ? try namedWake(wake) : nil, wake),
                dictation: { [dictationSettings] in try DictationDecoder(settings: dictationSettings) })
        }
    }
}
