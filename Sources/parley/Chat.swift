import ArgumentParser
import Foundation
import ParleyApps
import Logging
import ParleyCore
import ParleyExternal
import ParleyIntents
import ParleyHardware
import ParleySpeech
import Synchronization

/// `parley chat`: the text console standing in for microphone, speaker,
/// LEDs and button. The contract other tools rely on:
/// - each input line is an utterance (a leading "hey" is optional);
/// - `:press`, `:long-press`, `:double-press` are button gestures
///   (`:volume-up`, `:volume-down` the volume buttons'),
///   `:wait N` advances the clock N seconds, `:quit` or end of input ends;
/// - standard output carries only `device: <text>`, `led: <state>` and
///   `performed: <App>.<Intent> <JSON>` lines; logs go to standard error;
/// - exit status 0 when input ends.
struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Talk to the device by typing (see the console contract in --help).",
        discussion: """
            Type what you would say. Commands: :press, :long-press, :double-press, :volume-up, :volume-down, :wait N, :input NAME, :mute, :unmute, :quit.
            Output lines: "device: <text>", "led: <state>", "performed: <App>.<Intent> <JSON>".
            """)

    @Option(name: .customLong("primary-app"), help: "The primary app, whose phrases need not name it ('none' for no primary app).")
    var primaryApp: String = "Coffee Maker"

    @Option(name: .customLong("voice-confirm"),
            help: "Comma-separated categories that a spoken yes may confirm (e.g. delete,create), or 'none'. Orders and payments always need the button.")
    var voiceConfirm: String?

    @Flag(name: .customLong("no-tips"), help: "Do not suggest shorter phrases after long conversations.")
    var noTips = false

    @Option(name: .customLong("double-press"), help: "A phrase run by a double press.")
    var doublePress: String?

    @Option(name: .customLong("device-name"), help: "The device's name, optional after \"hey\" (\"hey computer, ...\").")
    var deviceName: String = "computer"

    @Option(name: .customLong("shortcuts"),
            help: "A folder of shortcut files (docs/shortcuts.md) to load; problems are printed to standard error, the other files load.")
    var shortcutsDirectory: String?

    @Option(name: .customLong("state"),
            help: "A state folder (SQLite, as the daemon's) so donations, custom phrases and notes persist across sessions; without it the session's state is forgotten at exit.")
    var stateDirectory: String?

    @Option(name: .customLong("apps"),
            help: "An apps folder: every app folder in it is loaded (handlers started) as the daemon loads <state directory>/apps.")
    var appsFolder: String?

    func validate() throws {
        _ = try Self.categories(voiceConfirm)
    }

    /// Parses the --voice-confirm list.
    static func categories(_ text: String?) throws -> Set<IntentCategory>? {
        guard let text else { return nil }
        if text.trimmingCharacters(in: .whitespaces).lowercased() == "none" { return [] }
        var result = Set<IntentCategory>()
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !item.isEmpty {
            guard let category = IntentCategory(rawValue: item) else {
                throw ValidationError("--voice-confirm: unknown category '\(item)'; expected some of \(IntentCategory.allCases.map(\.rawValue).joined(separator: ", ")) or 'none'")
            }
            if EngineConfiguration.buttonOnlyCategories.contains(category) {
                throw ValidationError("--voice-confirm: '\(item)' is confirmed with the button only; a voice alone never spends money")
            }
            result.insert(category)
        }
        return result
    }

    func run() async throws {
        let external = try await loadApps()
        do {
            try await converse(external: external?.apps ?? [])
        } catch {
            await external?.host.stopAll()
            throw error
        }
        // The handlers get `shutdown` and end with the console.
        await external?.host.stopAll()
    }

    func converse(external: [AppDescription]) async throws {
        let registry: AppRegistry
        do {
            registry = try AppRegistry(apps: BundledApps.all, external: external,
                                       primaryApp: primaryApp.lowercased() == "none" ? nil : primaryApp)
        } catch {
            throw ValidationError("--primary-app: \(error)")
        }
        var configuration = try Self.categories(voiceConfirm).map(EngineConfiguration.init(voiceConfirmableCategories:)) ?? EngineConfiguration()
        configuration.tipsEnabled = !noTips
        configuration.doublePress = doublePress.map { .run(phrase: $0) } ?? .nothing
        configuration.voiceTrigger = .console
        let clock = SteppedClock()
        let sink = ConsoleSink()
        let engine = ConversationEngine(registry: registry, stores: try StoreFactory.makeStores(stateDirectory: stateDirectory), clock: clock,
                                        sink: sink, configuration: configuration)
        await engine.reloadPhrases()
        // The simulated board's inputs (board/sim), toggled by `:input NAME`.
        var inputs = Self.simulatedInputs()
        if let shortcutsDirectory {
            let environment = ShortcutEnvironment(registry: registry, baseModel: await engine.phraseModel(),
                                                  inputNames: inputs.isEmpty ? nil : Set(inputs.keys))
            let library = ShortcutLibrary.load(directory: shortcutsDirectory, environment: environment)
            for problem in library.problems { ConsoleSink.log(problem.description) }
            await engine.setShortcuts(library)
        }

        while let raw = readLine(strippingNewline: true) {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard line.hasPrefix(":") else {
                await engine.hear(Self.withoutWake(line, deviceName: deviceName))
                continue
            }
            let parts = line.dropFirst().split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            switch parts.first ?? "" {
            case "press": await engine.button(.press)
            case "long-press": await engine.button(.longPress)
            case "double-press": await engine.button(.doublePress)
            case "volume-up": await engine.button(.volumeUp)
            case "volume-down": await engine.button(.volumeDown)
            case "mute":
                // The switch moves first, as on the board, whose LEDs change before the engine hears of it.
                sink.setMuteSwitch(true)
                await engine.setMuted(true)
            case "unmute":
                sink.setMuteSwitch(false)
                await engine.setMuted(false)
            case "quit": return
            case "input":
                guard parts.count == 2, let level = inputs[parts[1]] else {
                    ConsoleSink.log("parley chat: ':input' needs an input of the simulated board (\(inputs.keys.sorted().joined(separator: ", "))), got '\(line)'")
                    continue
                }
                inputs[parts[1]] = !level
                await engine.input(parts[1], active: !level)
            case "wait":
                guard parts.count == 2, let seconds = Double(parts[1]), seconds >= 0 else {
                    ConsoleSink.log("parley chat: ':wait' needs a number of seconds, e.g. ':wait 10' (got '\(line)')")
                    continue
                }
                clock.advance(by: seconds)
                await engine.tick()
            default:
                ConsoleSink.log("parley chat: unknown command '\(line)'; expected :press, :long-press, :double-press, :volume-up, :volume-down, :wait N, :input NAME, :mute, :unmute or :quit")
            }
        }
    }

    /// The --apps folder loaded, handlers started; each refused folder's
    /// errors go to standard error (FILE:LINE:COLUMN: reason), the rest load.
    func loadApps() async throws -> (host: ExternalAppsHost, apps: [AppDescription])? {
        guard let appsFolder else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: appsFolder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("--apps: '\(appsFolder)' is not a folder")
        }
        let logger = Logger(label: "parley.apps") { StreamLogHandler.standardError(label: $0) }
        // With --state, app data persists beside the console's state, as the daemon's does.
        let data = URL(fileURLWithPath: stateDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("parley-chat-\(getpid())").path)
            .appendingPathComponent("app-data")
        let host = ExternalAppsHost(directory: URL(fileURLWithPath: appsFolder), builtIn: BundledApps.all.map(AppDescription.init),
                                    dataDirectory: data, primaryApp: primaryApp.lowercased() == "none" ? nil : primaryApp, logger: logger)
        await host.refresh()
        for (name, errors) in await host.refusals.sorted(by: { $0.key < $1.key }) {
            ConsoleSink.log("parley chat: app folder '\(name)' refused:\n\(errors.description)")
        }
        return (host, await host.descriptions)
    }

    /// The simulated board's named inputs, all inactive (none when its board file is not found).
    static func simulatedInputs() -> [String: Bool] {
        guard let url = try? BoardLocator.locate("sim"), let board = try? Board.load(from: url) else { return [:] }
        return Dictionary(board.inputs.map { ($0.name, false) }, uniquingKeysWith: { a, _ in a })
    }

    /// "Hey, order soup" and "Hey computer, order soup" -> "order soup": the
    /// wake words are optional at the console.
    static func withoutWake(_ line: String, deviceName: String) -> String {
        WakeGrammar(name: deviceName).strip(text: line)
    }
}

/// Prints the engine's events in the console format.
///
/// `led:` lines are what the board's LEDs would show, by the rule of the
/// board's `LEDController`: while the mute switch is on they show `muted`
/// whatever the engine is doing, except a success or error flash. Without
/// this, `:mute` during a confirmation printed nothing although the LEDs
/// change, and "thinking"/"speaking" were printed while they stay muted.
/// Flashes need no clock here: the engine's next state ends one, as the
/// flash's end would.
final class ConsoleSink: EngineOutputSink {
    private struct LEDs {
        var engine: DeviceState?
        var muteSwitch = false
        var shown: DeviceState?

        /// The state to print, if the LEDs change.
        mutating func show(_ state: DeviceState?) -> DeviceState? {
            guard let state, state != shown else { return nil }
            shown = state
            return state
        }
        var persistent: DeviceState? { muteSwitch ? .muted : engine }
    }
    private let leds = Mutex(LEDs())

    /// The console's `:mute` / `:unmute`: the mute switch of the board.
    func setMuteSwitch(_ on: Bool) {
        let changed = leds.withLock { leds -> DeviceState? in
            leds.muteSwitch = on
            return leds.show(leds.persistent)
        }
        if let changed { Self.out("led: \(changed.rawValue)") }
    }

    func emit(_ event: EngineEvent) async {
        switch event {
        case .spoke(let text): Self.out("device: \(text)")
        case .led(let state):
            let changed = leds.withLock { leds -> DeviceState? in
                if state.isTransient { return leds.show(state) }
                leds.engine = state
                return leds.show(leds.persistent)
            }
            if let changed { Self.out("led: \(changed.rawValue)") }
        case .performed(let performed):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let json = (try? encoder.encode(performed.parameters)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
            Self.out("performed: \(performed.app).\(performed.intent) \(json)")
        case .sound(let name): Self.log("sound: \(name)")
        case .log(let message): Self.log(message)
        case .listening: break
        }
    }

    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
