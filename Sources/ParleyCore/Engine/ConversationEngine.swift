import Foundation

/// The conversation engine (docs/spec.md §5): turns what a person says and presses
/// into resolved, confirmed, performed intents, and reports everything a
/// person perceives to an output sink.
///
/// Inputs: `hear(_:confidence:)`, `button(_:)`, `woken(window:)`,
/// `start(_:)` (a run by name), `tick()` after the clock moves,
/// `setMuted(_:)`. Outputs: `EngineEvent`s in order.
///
/// The actor is thin: what to do next is decided by `RunMachine` (pure
/// steps), what is waited for is one `Waiting`, help and tips are `Guide`,
/// habits `Suggestions`, perform and its time limit `PerformRace`. The actor
/// is reentrant on purpose: while a run performs, `hear("cancel")` and a long
/// press are heard and stop it.
public actor ConversationEngine {
    /// The installed apps; replaced with `setRegistry(_:)` when the apps folder changes.
    public private(set) var registry: AppRegistry
    public let stores: ParleyStores
    public let clock: any ParleyClock
    public let sink: any EngineOutputSink
    public internal(set) var configuration: EngineConfiguration

    // Shared with ConversationEngine+Phrases.swift.
    var commandModel = PhraseModel()
    var commandResolver: Resolver?
    /// Set while the phrase model lacks some app's values (`reloadPhrases`).
    var vocabularyRetry: VocabularyRetry?
    // Shared with the resolution and perform extensions (other files).
    var phase: Phase = .idle
    private var led: DeviceState?
    var muted = false
    var lastLine: String?
    var guide: Guide
    var suggestions: Suggestions
    private(set) var phrases: CustomPhraseBook
    /// Scheduled by apps (ConversationEngine+Services.swift), spoken from `tick()`.
    var announcements = Announcements()
    private var wallClock: WallClockWatch
    private var lastRunID: UInt64 = 0
    /// The perform under way, so "cancel" can stop it.
    var performing: (id: RunID, race: PerformRace)?
    /// Shortcuts (ConversationEngine+Shortcuts.swift): the loaded ones, the
    /// one running, and when time triggers fire.
    var shortcuts = ShortcutLibrary()
    var shortcutActivity: ShortcutActivity?
    var shortcutAdvancing = false
    var timePlan = TimeTriggerPlan(shortcuts: [], now: Date())
    /// The speaker's volume (ConversationEngine+Volume.swift): kept in the
    /// app-data store until the daemon plugs in its mixer-driving control.
    var volumeControl: any VolumeControl

    public init(registry: AppRegistry, stores: ParleyStores, clock: any ParleyClock,
                sink: any EngineOutputSink, configuration: EngineConfiguration = EngineConfiguration()) {
        self.registry = registry
        self.stores = stores
        self.clock = clock
        self.sink = sink
        self.configuration = configuration
        guide = Guide(registry: registry)
        wallClock = WallClockWatch(now: clock.now, instant: clock.instant)
        suggestions = Suggestions(stores: stores, registry: registry)
        phrases = CustomPhraseBook(stores: stores, registry: registry)
        volumeControl = VolumeSetting(store: stores.appData)
    }

    // MARK: - Public API

    /// The model of everything that can be said as a command (for the recogniser).
    public func phraseModel() async -> PhraseModel {
        await prepare()
        return commandModel
    }

    /// What the recogniser should listen for now.
    public var listeningMode: ListeningMode {
        switch phase {
        case .waiting(let waiting):
            switch waiting.kind {
            case .suggestion: .commands
            case .question(let question) where question.question.expectation == .text:
                .dictation(FollowUpGrammar.model(for: question.question))
            case .shortcutQuestion(let question) where question.expectation == .text:
                .dictation(FollowUpGrammar.model(for: question))
            default: .followUp(waiting.model)
            }
        case .pushToTalk: .window
        case .idle, .busy: .commands
        }
    }

    /// Whether a conversation is open (a question, a confirmation, a suggestion, a run).
    public var isConversationOpen: Bool {
        if case .idle = phase { return false }
        return true
    }

    /// Installs another set of apps (an external app added, changed or
    /// removed): help, suggestions and custom phrases use them from now on,
    /// and the phrase model is recompiled. A run already under way keeps the
    /// app it started with.
    public func setRegistry(_ registry: AppRegistry) async {
        self.registry = registry
        guide.registry = registry
        suggestions.registry = registry
        phrases.registry = registry
        await reloadPhrases()
    }

    /// Replaces the configuration (takes effect from the next input).
    public func setConfiguration(_ configuration: EngineConfiguration) {
        self.configuration = configuration
    }

    /// An utterance (a transcript from the recogniser, or a console line).
    /// `unsure`: the recogniser accepted it with low confidence (`AskRule`):
    /// a command that would act is asked back before it runs. `doubted`:
    /// the words of it the recogniser is unsure of (`AskRule.doubted`);
    /// when they are one slot's value, only that slot is asked back.
    public func hear(_ text: String, confidence: Double? = nil, unsure: Bool = false, doubted: [String] = []) async {
        await prepare()
        if muted { await log("muted, ignored: \(text)"); return }
        if let confidence, confidence < configuration.minimumConfidence {
            await log("low confidence \(confidence), ignored: \(text)")
            return
        }
        switch phase {
        case .idle, .pushToTalk:
            if unsure {
                await check(text, doubted: doubted)
            } else {
                await command(text, trigger: configuration.voiceTrigger)
            }
        case .waiting(let waiting):
            if let resolution = waiting.resolver.resolve(text), case .builtin(let builtin) = resolution.target, builtin.isVolume {
                // The volume, not an answer: the wait stays open, with its window from now.
                phase = .waiting(waiting.renewed(at: clock.instant))
                await adjustVolume(builtin, values: resolution.values)
                return
            }
            switch waiting.kind {
            case .suggestion: await command(text, trigger: configuration.voiceTrigger)
            case .question(let question): await answer(text, question, waiting)
            case .confirmation(let run, let voiceAllowed): await confirmationAnswer(text, run: run, voiceAllowed: voiceAllowed, waiting)
            case .forget: await forgetAnswer(text, waiting)
            case .shortcutQuestion(let question): await shortcutAnswer(text, question, waiting)
            case .check(let heard, let slot): await checkAnswer(text, heard: heard, slot: slot, waiting)
            }
        case .busy:
            // Only "cancel" and the volume are heard while a run works: cancel stops the run.
            switch commandResolver?.resolve(text) {
            case let resolution? where resolution.target == .builtin(.cancel): await cancel()
            case let resolution?:
                if case .builtin(let builtin) = resolution.target, builtin.isVolume {
                    await adjustVolume(builtin, values: resolution.values)
                }
            case nil: break
            }
        }
    }

    /// Starts a run by name, not from a phrase (a shortcut's step, an
    /// automation, an external caller): values are resolved, missing ones
    /// asked for, the stakes confirmed and the intent performed as after a
    /// phrase. Returns the run's identifier, or nil when the intent is
    /// unknown (logged) or a conversation is open (a question, a
    /// confirmation, a suggestion or a run; an open push-to-talk window is
    /// closed by it).
    @discardableResult
    public func start(_ request: RunRequest) async -> RunID? {
        await prepare()
        switch phase {
        case .idle, .pushToTalk: break
        case .waiting, .busy:
            await log("\(request.app).\(request.intent) not started: a conversation is open")
            return nil
        }
        guard let app = registry.app(request.app), let descriptor = registry.descriptor(app: request.app, intent: request.intent) else {
            await log("no intent \(request.app).\(request.intent)")
            return nil
        }
        let run = Run(id: nextRunID(), app: app, descriptor: descriptor, values: request.values,
                      settled: request.settled, trigger: request.trigger)
        await log("started \(run.key) \(request.values) by \(request.trigger)")
        await resolve(run)
        return run.id
    }

    /// The named wake word was heard alone ("hey computer"): a window of
    /// `seconds` opens in which a command needs no wake word, as after a
    /// button press. Ignored while a conversation is open or muted.
    public func woken(window seconds: TimeInterval) async {
        await prepare()
        switch phase {
        case .idle, .pushToTalk:
            guard !muted else { await log("muted, wake ignored"); return }
            phase = .pushToTalk(deadline: clock.instant + seconds)
            await sink.emit(.sound(.wake))
            await rest()
        case .waiting, .busy:
            await log("wake ignored: a conversation is open")
        }
    }

    /// A button gesture.
    public func button(_ gesture: ButtonGesture) async {
        await prepare()
        switch gesture {
        case .longPress:
            if case .idle = phase {
                if let shortcut = shortcutTriggered(by: .longPress) {
                    await runShortcut(named: shortcut.name, trigger: .automation)
                } else {
                    await setLED(muted ? .muted : .idle)
                }
            } else {
                await cancel()
            }
        case .doublePress:
            await doublePress()
        case .volumeUp, .volumeDown:
            // A volume button works whatever is open, and answers with a tick.
            await pressVolume(gesture == .volumeUp ? .up : .down)
        case .press:
            switch phase {
            case .waiting(let waiting):
                switch waiting.kind {
                case .confirmation(var run, _):
                    run.confirmedWithButton = true
                    await perform(run)
                case .suggestion(let run): await perform(run)
                case .forget: await forgetHistory()
                case .check(let heard, _): await confirmCheck(heard)
                case .question, .shortcutQuestion: await log("press ignored while a question is open")
                }
            case .idle:
                if let shortcut = shortcutTriggered(by: .press) {
                    await runShortcut(named: shortcut.name, trigger: .automation)
                } else {
                    await idlePress()
                }
            case .pushToTalk: phase = .idle; await rest()
            case .busy: await log("press ignored while a question is open")
            }
        }
    }

    /// Re-evaluates everything that depends on time: answer time-outs,
    /// button windows, scheduled announcements. Call after the clock moves.
    /// Every deadline is on the monotonic clock; a jump of the wall clock is
    /// noticed and logged, and moves nothing that is waiting.
    ///
    /// `deviceSpeaking`: the device's voice is still playing. A person can
    /// only answer a question once they have heard it, so while it plays the
    /// waiting window does not run: each open deadline is held at a full
    /// window from now, which makes the window start when the voice stops
    /// (a long confirmation line would otherwise eat most of a short one).
    public func tick(deviceSpeaking: Bool = false) async {
        let instant = clock.instant
        let jump = wallClock.jump(now: clock.now, instant: instant)
        if let jump {
            // Nothing waiting moves: deadlines, windows and timers are monotonic.
            // Habits read the wall clock when asked, so they follow the new time;
            // time-of-day triggers are planned again from it.
            await log("wall clock moved by \(Int(jump.rounded())) s; waits and timers keep their monotonic deadlines")
        }
        await finishShortcutWait()
        await runDueTimeTriggers(wallClockJumped: jump != nil)
        for announcement in announcements.takeDue(at: instant) {
            // A timer alarm is never silent: output is at least the alarm
            // floor until its chime and words have played.
            await volumeControl.alarmStarts()
            await sink.emit(.sound(.chime))
            await say(announcement.text)
            await volumeControl.alarmQueued()
            await rest()
        }
        if deviceSpeaking {
            holdDeadlines(from: instant)
            return
        }
        // Idle, a model compiled again with the values that were missing goes
        // to the recogniser now rather than after the next conversation.
        if case .idle = phase, await retryMissingVocabularies() {
            await sink.emit(.listening(listeningMode))
        }
        switch phase {
        case .waiting(let waiting):
            switch waiting.lapse(at: instant) {
            case .reask(let again)?:
                phase = .waiting(again)
                await say(again.line)
                await rest()
            case .giveUp?:
                phase = .idle
                await say(shortcutGiveUpLine(waiting) ?? "No answer heard, so nothing was done.")
                await rest()
            case .close?:
                phase = .idle
                await rest()
            case nil:
                break
            }
        case .pushToTalk(let deadline) where instant >= deadline:
            phase = .idle
            await rest()
        default:
            break
        }
    }

    /// Pushes every open waiting deadline to at least a full window after `instant`.
    private func holdDeadlines(from instant: ParleyInstant) {
        switch phase {
        case .waiting(let waiting): phase = .waiting(waiting.held(from: instant))
        case .pushToTalk(let deadline): phase = .pushToTalk(deadline: max(deadline, instant + configuration.buttonWindow))
        case .idle, .busy: break
        }
    }

    /// The mute switch: while muted nothing is heard; the button still works.
    public func setMuted(_ muted: Bool) async {
        self.muted = muted
        await rest()
    }

    // MARK: - Commands

    func nextRunID() -> RunID {
        lastRunID += 1
        return RunID(value: lastRunID)
    }

    /// Whether `id` is still the run the engine is carrying.
    func isCurrent(_ id: RunID) -> Bool {
        if case .busy(let current) = phase { return current == id }
        return false
    }

    /// A built-in command: cancel, repeat, help, forget my history.
    func run(_ builtin: PhraseCompiler.Builtin, values: [String: String]) async {
        switch builtin {
        case .cancel:
            if isConversationOpen { await cancel() } else { await rest() }
        case .repeat:
            if let lastLine { await say(lastLine) }
            await rest()
        case .help:
            phase = .idle
            let donations = (try? await stores.donations.donations(app: nil, intent: nil, limit: 1000)) ?? []
            let custom = (try? await phrases.all()) ?? []
            await say(guide.helpLine(donations: donations, custom: custom))
            await rest()
        case .appHelp:
            phase = .idle
            let donations = (try? await stores.donations.donations(app: nil, intent: nil, limit: 1000)) ?? []
            let custom = (try? await phrases.all()) ?? []
            if let line = guide.appHelpLine(values[PhraseCompiler.appBinding] ?? "", donations: donations, custom: custom) {
                await say(line)
            }
            await rest()
        case .forgetHistory:
            await askToForgetHistory()
        case .wake:
            await rest()
        case .shortcutHelp:
            await describeShortcut(values[PhraseCompiler.shortcutBinding] ?? "")
        case .volumeUp, .volumeDown, .volumeSet, .mute, .unmute, .volumeQuery:
            await adjustVolume(builtin, values: values)
        }
    }

    private func doublePress() async {
        guard !isConversationOpen else { await log("double press: nothing configured"); return }
        if let shortcut = shortcutTriggered(by: .doublePress) {
            await runShortcut(named: shortcut.name, trigger: .automation)
            return
        }
        switch configuration.doublePress {
        case .nothing:
            await log("double press: nothing configured")
        case .repeatLast:
            await setLED(.listening)
            await setLED(.thinking)
            await run(.repeat, values: [:])
        case .listShortcuts:
            await setLED(.listening)
            await setLED(.thinking)
            await run(.help, values: [:])
        case .run(let phrase):
            await command(phrase, trigger: .button)
        }
    }

    // MARK: - Output

    func say(_ line: String) async {
        await setLED(.speaking)
        lastLine = line
        await sink.emit(.spoke(line))
    }

    func setLED(_ state: DeviceState) async {
        guard led != state else { return }
        led = state
        await sink.emit(.led(state))
    }

    /// The LED state of the current phase, once speaking is over.
    func rest() async {
        switch phase {
        case .waiting(let waiting) where waiting.awaitsButton: await setLED(.awaitingConfirmation)
        case .waiting, .pushToTalk: await setLED(muted ? .muted : .listening)
        case .busy: await setLED(.thinking)
        case .idle: await setLED(muted ? .muted : .idle)
        }
        await stopShortcutIfAbandoned()
        // Settled: the next utterance may be handled while the grammar for
        // this state compiles (seconds on a Pi after a question).
        InputTurn.current?.release()
        await sink.emit(.listening(listeningMode))
    }

    func log(_ message: String) async { await sink.emit(.log(message)) }
}
