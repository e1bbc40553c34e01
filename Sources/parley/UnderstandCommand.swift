import ArgumentParser
import Foundation
import ParleyApps
import ParleyAudio
import ParleyCore
import ParleySpeech

/// `parley understand --app <app> FILE.wav...`: each file is the audio after
/// the wake word. It goes through the daemon's path: ParleyAudio's
/// endpointer, the command recogniser on the grammar compiled from the
/// engine's phrase model (only that app loaded, as the primary app), then
/// ParleyCore's resolver. One JSON object per line.
struct Understand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "understand",
        abstract: "Recognise and resolve recorded commands (16 kHz mono WAV), one JSON line per file.")

    @Option(help: "App identifier or name (e.g. coffee-maker, soup-chef), or 'all' for every bundled app.")
    var app: String
    @Option(name: .customLong("set"), help: "Decoder setting name=value (repeatable), e.g. beam=1e-60.")
    var settings: [String] = []
    @Argument(help: "WAV files (16 kHz, 16-bit, mono).")
    var files: [String]

    static func key(_ name: String) -> String { name.lowercased().filter { $0.isLetter || $0.isNumber } }

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
        for s in settings {
            do { try decoderSettings.apply(s) } catch { throw ValidationError("--set \(s): \(error)") }
        }
        let recognizer = try CommandRecognizer(model: model, settings: decoderSettings)
        let resolver = Resolver(model: model)
        for file in files {
            let audio = try PCMAudio.read(URL(fileURLWithPath: file))
            let start = DispatchTime.now().uptimeNanoseconds
            let segment = Self.endpointed(audio.samples)
            let result = try recognizer.recognize(segment)
            let resolution = result.match == nil ? nil : resolver.resolve(result.transcript)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            var line: [String: Any] = [
                "file": file, "intent": resolution?.intent ?? NSNull(), "slots": resolution?.values ?? [:],
                "transcript": result.transcript, "audio_seconds": audio.seconds, "decode_seconds": seconds,
            ]
            if resolution == nil { line["slots"] = [String: String]() }
            let data = try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// The first speech segment the daemon's endpointer finds (with its
    /// pre- and post-roll), or the whole file when it finds none or the
    /// speech runs to the end.
    static func endpointed(_ samples: [Int16]) -> [Int16] {
        let endpointer = Endpointer()
        var segment: Range<Int>?
        var index = 0
        while index < samples.count && segment == nil {
            let end = min(samples.count, index + 1600)
            endpointer.process(Array(samples[index..<end])) { event in
                if case .speechEnded(let s, let e, _) = event, segment == nil {
                    segment = max(0, Int(s))..<min(samples.count, Int(e))
                }
            }
            index = end
        }
        guard let segment, !segment.isEmpty else { return samples }
        return Array(samples[segment])
    }
}

/// Output sink that says nothing: `understand` only resolves.
struct SilentSink: EngineOutputSink {
    func emit(_ event: EngineEvent) async {}
}
