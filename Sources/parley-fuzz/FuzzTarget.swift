import Foundation
import ParleyApps
import ParleyAudio
import ParleyConfiguration
import ParleyControl
import ParleyCore
import ParleyExternal
import ParleyHardware
import ParleyWyoming

/// One reader of outside input, driven with arbitrary bytes. Every reader
/// must answer bad input with an error (or a refusal), never a crash, a hang
/// or unbounded memory: that is all a target checks, so errors are ignored.
enum FuzzTarget: String, CaseIterable, Sendable {
    case config, board, shortcut, manifest, handler, control, wav, template, resolver, wyoming, page

    func run(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        switch self {
        case .config:
            _ = try? ConfigLoader.parse(text, file: "fuzz/parley.yaml")
        case .board:
            _ = try? Board.parse(yaml: text, file: "fuzz/board.yaml")
        case .shortcut:
            _ = try? ShortcutLoader.parse(yaml: text, file: "fuzz/shortcut.yaml")
        case .manifest:
            _ = try? ManifestLoader.parse(yaml: text, file: "fuzz/manifest.yaml", folder: Self.scratchFolder)
        case .handler:
            // Output is split into lines by the reader; each line is one reply.
            for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
                _ = JSONRPC.reply(to: Data(line))
            }
        case .control:
            for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
                _ = try? ControlRequest(line: Data(line))
            }
        case .wav:
            // `parley play` and `parley understand`: the header, then the samples
            // as the microphone spool would take them.
            if let contents = try? WAVFile.decode(data, path: "fuzz.wav") {
                _ = try? AudioSpool.microphoneSamples(contents, path: "fuzz.wav")
            }
        case .template:
            // First line: a template; the rest: text resolved against it.
            let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            Self.resolveTemplate(String(parts[0]), transcript: parts.count > 1 ? String(parts[1]) : "")
        case .resolver:
            _ = Self.bundledResolver.resolve(text)
        case .wyoming:
            // A Wyoming connection's bytes, arriving in two reads split at the
            // first byte's value: framing and typed events until the first error.
            var decoder = WyomingDecoder()
            let split = data.isEmpty ? 0 : Int(data[data.startIndex]) % (data.count + 1)
            for part in [data.prefix(split), data.dropFirst(split)] {
                decoder.append(part)
                while let frame = try? decoder.next() { _ = try? WyomingEvent(frame: frame) }
            }
        case .page:
            PageFuzz.run(data)
        }
    }

    /// Builds once what a target reads against, so no input pays for it.
    func prepare() {
        if self == .resolver { _ = Self.bundledResolver.resolve("") }
    }

    /// Where the handler would run; it holds none, so a manifest naming one is refused there.
    static let scratchFolder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("parley-fuzz-app")

    /// Every bundled app with Coffee Maker's rich templates: the resolver the daemon starts with.
    static let bundledResolver: Resolver = {
        do {
            let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
            return Resolver(model: PhraseCompiler.compile(registry))
        } catch {
            fatalError("the bundled apps do not register: \(error)")
        }
    }()

    /// A phrase template compiled into a one-rule model, as a primary app's
    /// template is, and the resolver built from it run on `transcript`.
    static func resolveTemplate(_ template: String, transcript: String) {
        var lists: Set<String> = []
        guard let body = try? TemplateNotation.parse(template, vocabulary: { lists.insert($0); return $0 }) else { return }
        let vocabularies = Dictionary(uniqueKeysWithValues: lists.map { name in
            (name, SlotVocabulary(name: name, values: [SlotValue(spoken: ["large"], canonical: "large"),
                                                       SlotValue(spoken: ["two", "shots"], canonical: "2")]))
        })
        let model = PhraseModel(
            rules: [PhraseRule(id: "fuzz/0", target: .intent(app: "Fuzz", intent: "Fuzz", fixed: [:]), body: body)],
            vocabularies: vocabularies)
        _ = Resolver(model: model).resolve(transcript)
    }

    /// The target named by PARLEY_FUZZ_TARGET (libFuzzer owns the command line).
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["PARLEY_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("PARLEY_FUZZ_TARGET must be one of: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        return target
    }()
}
