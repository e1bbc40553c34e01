import ArgumentParser
import Foundation
import ParleyApps
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleyDenoise
import ParleySpeech

/// `parley understand --app <app> FILE.wav...`: each file is the audio after
/// the wake word. It goes through the daemon's path (`RecordedUtterances`):
/// ParleyAudio's endpointer, the streaming command decoder fed while the
/// speech lasts, on the grammar compiled from the engine's phrase model
/// (only that app loaded, as the primary app), then ParleyCore's resolver.
/// As in the daemon's listening window, a rejected segment (a clatter, a
/// cough) does not end it; the first understood one counts. One JSON object
/// per line, with where each decoded segment began and ended.
struct Understand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "understand",
        abstract: "Recognise and resolve recorded commands (16 kHz mono WAV), one JSON line per file.")

    @Option(help: "App identifier or name (e.g. coffee-maker, soup-chef), or 'all' for every bundled app.")
    var app: String
    @Option(help: "Acoustic model: stock (Debian's en-us; the default, as the daemon's), adapted (/usr/share/parley/model/en-us-adapted, else .build/model/en-us-adapted of a checkout, else stock) or a model folder.")
    var acousticModel = "stock"
    @Option(name: .customLong("set"), help: "Decoder setting name=value (repeatable), e.g. beam=1e-60.")
    var settings: [String] = []
    @Option(help: "Silence (ms) after which a complete phrase, one the grammar cannot extend, ends the command (0: off).")
    var completePhraseSilence = UtteranceListening().completePhraseSilenceMilliseconds
    @Option(help: "Silence (ms) after which a whole phrase that the grammar can still extend ends (at or above the trailing silence: at the trailing silence).")
    var extendablePhraseSilence = UtteranceListening().extendablePhraseSilenceMilliseconds
    @Option(help: "Trailing silence (ms) that ends any other command.")
    var trailingSilence = EndpointerConfiguration().trailingSilenceMilliseconds
    @Option(help: "Capture front end before listening, as the daemon's speech.front_end: auto (the default: the daemon's on a Pi 4 or 5, neural), none, denoise, denoise+agc or neural (DeepFilterNet3 on each utterance the command decoders hear), optionally with the noise suppression in dB (denoise:-25, neural:-30).")
    var frontEnd = "auto"
    @Option(help: "Ask back unsure commands, as the daemon's speech.ask_unsure: on (its default) or off. Gives each file's \"asks\".")
    var askUnsure = "on"
    @Option(help: "With the neural front end: decode an app intent the ask rule would ask back again without the network, and not ask it when both give the same intent and values, as the daemon: on (the default), off, or always (every accepted app intent decoded again and marked; the same decisions). With --ask-unsure off the shipped rule's lines decide it, as in the daemon. Gives each file's \"corroborated\".")
    var corroborate = "on"
    @Option(help: "Each word's lattice posterior in \"words\": off (the default, as the daemon: it costs up to seconds per utterance in noise) or on.")
    var wordPosteriors = "off"

    @Option(help: "Echo canceller before listening, as the daemon's speech.echo_cancel while the device is silent (nothing played: its reference is silence): off, on or linear, optionally with the tail in ms (on:200).")
    var echoCancel = "off"
    @Option(help: "Rejection while spoken (not in the daemon: BENCHMARKS.md, \"Rejecting while spoken\"): off (the default, as the daemon), measure (look every 250 ms from 750 ms, give nothing up, print the looks) or MARGIN[:FIRST_MS[:INTERVAL_MS]].")
    var rejectEarly = "off"
    @Argument(help: "WAV files (16 kHz, 16-bit, mono).")
    var files: [String]

    static func key(_ name: String) -> String { name.lowercased().filter { $0.isLetter || $0.isNumber } }

    /// Looks of rejection while spoken as printed: [seconds fed, margin].
    static func looks(_ looks: [PartialLook]) -> [[Double]] {
        looks.map { [Double($0.fedSamples) / Double(PCMAudio.sampleRate), $0.margin] }
    }

    func run() async throws {
        let all = BundledApps.all
        let apps: [any ParleyApp]
        let primary: String
        if app.lowercased() == "all" {
            apps = all
            primary = BundledApps.defaultPrimary
        } else {
            guard let chosen = all.first(where: { Self.key($0.identifier) == Self.key(app) || Self.key($0.name) == Self.key(app) }) else {
                throw ValidationError("--app \(app): unknown app; expected one of \(all.map(\.identifier).joined(separator: ", ")) or 'all'")
            }
            apps = [chosen]
            primary = chosen.identifier
        }
        let registry = try AppRegistry(apps: apps, primaryApp: primary)
        let engine = ConversationEngine(registry: registry, stores: EphemeralStores.make(), clock: SteppedClock(),
                                        sink: SilentSink())
        await engine.reloadPhrases()
        let model = await engine.phraseModel()
        var decoderSettings = DecoderSettings()
        do {
            let chosen = try AcousticModel(parsing: acousticModel)
            if chosen == .adapted && !AcousticModel.adaptedIsAvailable {
                FileHandle.standardError.write(Data(
                    "parley understand: the adapted acoustic model is neither at \(AcousticModel.installedAdaptedFolder) nor built at \(AcousticModel.developmentAdaptedFolder) (scripts/shipped-model.sh builds it); using the stock model\n".utf8))
            }
            decoderSettings.acousticModel = chosen.folder
        } catch {
            throw ValidationError("--acoustic-model \(acousticModel): \(error)")
        }
        for s in settings {
            do { try decoderSettings.apply(s) } catch { throw ValidationError("--set \(s): \(error)") }
        }
        let streaming = try StreamingCommandDecoder(model: model, settings: decoderSettings)
        do { streaming.earlyRejection = try EarlyRejection.parse(rejectEarly) } catch {
            throw ValidationError("--reject-early \(rejectEarly): \(error)")
        }
        guard let asking = ["on": true, "true": true, "off": false, "false": false][askUnsure] else {
            throw ValidationError("--ask-unsure \(askUnsure): expected on or off")
        }
        let askRule = asking ? AskRule() : nil
        guard let corroborating = ["on": true, "true": true, "always": true, "off": false, "false": false][corroborate] else {
            throw ValidationError("--corroborate \(corroborate): expected on, off or always")
        }
        guard let posteriors = ["on": true, "true": true, "off": false, "false": false][wordPosteriors] else {
            throw ValidationError("--word-posteriors \(wordPosteriors): expected on or off")
        }
        streaming.measuresWordPosteriors = posteriors
        let resolver = Resolver(model: model)
        for (name, value, least) in [("--complete-phrase-silence", completePhraseSilence, 0),
                                     ("--extendable-phrase-silence", extendablePhraseSilence, 0),
                                     ("--trailing-silence", trailingSilence, 1)] where value < least {
            throw ValidationError("\(name) \(value): expected milliseconds, at least \(least)")
        }
        var listening = UtteranceListening()
        listening.completePhraseSilenceMilliseconds = completePhraseSilence
        listening.extendablePhraseSilenceMilliseconds = extendablePhraseSilence
        var utterances = RecordedUtterances(
            configuration: EndpointerConfiguration(trailingSilenceMilliseconds: trailingSilence), listening: listening)
        // auto: the daemon's default on the speaker (a Pi 4 or 5: neural).
        do {
            utterances.frontEnd = frontEnd == "auto" ? ParleyConfig.defaultFrontEnd(board: "pi4") : try FrontEndSettings(parsing: frontEnd)
        } catch {
            throw ValidationError("--front-end \(frontEnd): \(error)")
        }
        // The neural stage runs on what the command decoders hear, as in the daemon.
        let decoder: any CommandDecoding
        if utterances.frontEnd.isNeural {
            do {
                let denoised = DenoisedCommandDecoder(streaming, denoiser: try NeuralDenoiser(settings: utterances.frontEnd),
                                                      corroborating: corroborating ? askRule ?? AskRule() : nil)
                denoised.corroboratesAll = corroborate == "always"
                decoder = denoised
            } catch {
                throw ValidationError("--front-end \(frontEnd): \(error)")
            }
        } else {
            decoder = streaming
        }
        do { utterances.echo = try EchoSettings(parsing: echoCancel) } catch {
            throw ValidationError("--echo-cancel \(echoCancel): \(error)")
        }
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            let start = DispatchTime.now().uptimeNanoseconds
            let (segments, result) = try utterances.understand(audio.samples, decoder: decoder)
            let resolution = result?.match == nil ? nil : resolver.resolve(result?.transcript ?? "")
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            var builtin: Any = NSNull()
            if case .builtin(let name)? = resolution?.target { builtin = name.rawValue }
            let line: [String: Any] = [
                "file": file, "intent": resolution?.intent ?? NSNull(),
                "slots": resolution?.values ?? [String: String](),
                "transcript": result?.transcript ?? "", "audio_seconds": audio.seconds, "decode_seconds": seconds,
                // Whether rejection let the words through, its confidence
                // (the daemon's threshold is -1), and the built-in command
                // ("volumeUp", "cancel") when the words start one rather than an intent.
                "accepted": result?.match != nil, "builtin": builtin,
                // The daemon's decision on an accepted command: asked back
                // ("Did you say ...?") rather than acted on (its AskRule).
                "asks": result.map { $0.match != nil && askRule?.asks($0) == true } ?? false,
                // JSON has no infinity (nothing decoded scores -inf): null then.
                "confidence": result.flatMap { $0.confidence.isFinite ? $0.confidence : nil } ?? NSNull(),
                // What the rejection and ask rules read (training/bin/eval-confidence.sh):
                // the threshold after the noise allowance, the estimated SNR
                // and the weakest word's ratio.
                "threshold": result?.evidence.map { $0.threshold } ?? NSNull(),
                "snr": result?.evidence.map { $0.snr } ?? NSNull(),
                "weakest_word": result?.evidence.map { $0.weakestWord } ?? NSNull(),
                // The SNR before the neural front end (null without it: "snr"
                // is then of the audio as heard), each word's own ratio and
                // lattice posterior, and the words the ask rule doubts (asked
                // back alone when they are one slot's: "Large, did I hear that
                // right?"; empty when the whole command is asked or none).
                "input_snr": result?.evidence?.inputSNR ?? NSNull(),
                // The command decoded again without the network gave the same
                // intent and slot values, so it is not asked back (the neural
                // front end only, and only for what the ask rule would ask).
                "corroborated": result?.evidence?.corroborated ?? false,
                "words": result?.evidence.map { $0.words.map { ["word": $0.word, "ratio": $0.ratio, "posterior": $0.posterior ?? NSNull()] as [String: Any] } } ?? [],
                "doubted": result.map { askRule?.asks($0) == true ? askRule?.doubted($0) ?? [] : [] } ?? [],
                // Where each decoded segment began and ended (seconds): an
                // end before the last word is a command cut short.
                // What rejection while spoken saw of the chosen segment:
                // seconds fed (lead-in included) and the margin over the
                // threshold at each look (scripts/eval-early-reject.sh at 2f148e6).
                "looks": Self.looks(result?.looks ?? []),
                // Every decoded segment's looks, in order (a recording of
                // several utterances, or one a television said).
                "segment_looks": segments.map { Self.looks($0.result.looks) },
                "segments": segments.map { [Double($0.range.lowerBound), Double($0.range.upperBound)].map { $0 / Double(PCMAudio.sampleRate) } },
            ]
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}

/// Output sink that says nothing: `understand` only resolves.
struct SilentSink: EngineOutputSink {
    func emit(_ event: EngineEvent) async {}
}
