import Foundation

/// The conversation engine (SPEC 5): turns what a person says and presses
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
    public private(set) var configuration: EngineConfiguration

    private var commandModel = PhraseModel()
    private(set) var commandResolver: Resolver?
    /// Set while the phrase model lacks some app's values (`reloadPhrases`).
    private var vocabularyRetry: VocabularyRetry?
    // Shared with the resolution and perform extensions (other files).
    var phase: Phase = .idle
    private var led: DeviceState?
    var muted = false
    var lastLine: String?
    var guide: Guide
    var suggestions: Suggestions
    private(set) var phrases: CustomPhraseBook
    private var announcements = Announcements()
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

    /// Compiles the phrase model from the apps and the stored custom phrases.
    ///
    /// An app that cannot give a parameter's values now (a handler slow to
    /// start on a busy CPU, one restarting) must not leave its phrases
    /// without them until the next reload: the model is compiled with what
    /// there is, and compiled again when `vocabularyRetry` is due (before the
    /// next command, or from `tick()` when idle), backing off while it fails.
    public func reloadPhrases() async {
        let custom = (try? await phrases.all()) ?? []
        let compiled = await registry.compiledPhrases(customPhrases: custom, shortcuts: shortcuts.shortcuts,
                                                      context: { self.context(app: $0) })
        commandModel = compiled.model
        commandResolver = Resolver(model: commandModel)
        let failedBefore = vocabularyRetry != nil
        vocabularyRetry = vocabularyRetry.next(unavailable: compiled.unavailable, at: clock.instant)
        if let retry = vocabularyRetry {
            let which = compiled.unavailable.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
            await log("phrases compiled without the values of \(which); asking again in \(Int(retry.interval)) s")
        } else if failedBefore {
            await log("phrases compiled again with every app's values")
        }
    }

    /// Compiles the phrases again if some app's values were missing and the
    /// retry is due. Returns whether it did.
    @discardableResult
    func retryMissingVocabularies() async -> Bool {
        guard let retry = vocabularyRetry, retry.due <= clock.instant else { return false }
        await reloadPhrases()
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

    /// A person's own phrase for an intent with fixed values ("Add to Siri").
    /// Refused when it clashes with a phrase the device already understands.
    public func addCustomPhrase(_ phrase: String, app: String, intent: String, parameters: [String: String]) async throws {
        await prepare()
        if app == CustomPhrase.shortcutApp {
            try await addShortcutPhrase(phrase, shortcut: intent)
            return
        }
        let custom = try await phrases.validated(phrase, app: app, intent: intent, parameters: parameters,
                                           against: commandResolver, at: clock.now)
        try await stores.customPhrases.save(custom)
        await reloadPhrases()
    }

    /// Custom phrases, oldest first.
    public func customPhrases() async throws -> [CustomPhrase] { try await phrases.all() }

    /// Deletes a custom phrase; true when it existed. The phrase model is recompiled.
    @discardableResult
    public func deleteCustomPhrase(_ phrase: String) async throws -> Bool {
        let deleted = try await stores.customPhrases.deletePhrase(phrase)
        if deleted { await reloadPhrases() }
        return deleted
    }

    /// Replaces the configuration (takes effect from the next input).
    public func setConfiguration(_ configuration: EngineConfiguration) {
        self.configuration = configuration
    }

    /// An utterance (a transcript from the recogniser, or a console line).
    public func hear(_ text: String, confidence: Double? = nil) async {
        await prepare()
        if muted { await log("muted, ignored: \(text)"); return }
        if let confidence, confidence < configuration.minimumConfidence {
            await log("low confidence \(confidence), ignored: \(text)")
            return
        }
        switch phase {
        case .idle, .pushToTalk:
            await command(text, trigger: configuration.voiceTrigger)
        case .waiting(let waiting):
            switch waiting.kind {
            case .suggestion: await command(text, trigger: configuration.voiceTrigger)
            case .question(let question): await answer(text, question, waiting)
            case .confirmation(let run, let voiceAllowed): await confirmationAnswer(text, run: run, voiceAllowed: voiceAllowed, waiting)
            case .forget: await forgetAnswer(text, waiting)
            case .shortcutQuestion(let question): await shortcutAnswer(text, question, waiting)
            }
        case .busy:
            // Only "cancel" is heard while a run works: it stops the run.
            if commandResolver?.resolve(text)?.target == .builtin(.cancel) { await cancel() }
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
        case .press:
            switch phase {
            case .waiting(let waiting):
                switch waiting.kind {
                case .confirmation(var run, _):
                    run.confirmedWithButton = true
                    await perform(run)
                case .suggestion(let run): await perform(run)
                case .forget: await forgetHistory()
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
            await sink.emit(.sound(.chime))
            await say(announcement.text)
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

    func prepare() async {
        if commandResolver == nil { await reloadPhrases() } else { await retryMissingVocabularies() }
    }

    func nextRunID() -> RunID {
        lastRunID += 1
        return RunID(value: lastRunID)
    }

    /// Whether `id` is still the run the engine is carrying.
    func isCurrent(_ id: RunID) -> Bool {
        if case .busy(let current) = phase { return current == id }
        return false
    }

    private func command(_ text: String, trigger: Trigger) async {
        guard let resolution = commandResolver?.resolve(text) else {
            await log("not understood: \(text)")
            return
        }
        await setLED(.listening)
        await setLED(.thinking)
        switch resolution.target {
        case .builtin(let builtin):
            await run(builtin, values: resolution.values)
        case .shortcut(let name):
            await log("resolved \(resolution.ruleID)")
            await runShortcut(named: name, trigger: .shortcut)
        case .intent(let appID, let intentID, _):
            guard let app = registry.app(appID), let descriptor = registry.descriptor(app: appID, intent: intentID) else {
                await log("no intent \(appID).\(intentID)")
                await rest()
                return
            }
            let run = Run(id: nextRunID(), app: app, descriptor: descriptor, values: resolution.values, trigger: trigger)
            await log("resolved \(resolution.ruleID) \(resolution.values)")
            await resolve(run)
        case .customPhrase, .answer:
            await rest()
        }
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
        await sink.emit(.listening(listeningMode))
    }

    func log(_ message: String) async { await sink.emit(.log(message)) }

    // MARK: - Services for apps

    nonisolated func context(app: String) -> IntentContext {
        IntentContext(app: app, now: clock.now, appData: stores.appData, services: EngineServices(engine: self, run: nil))
    }

    /// The context of a run's app code: what it donates counts only while the run is current.
    nonisolated func context(for run: Run) -> IntentContext {
        IntentContext(app: run.app.identifier, now: clock.now, appData: stores.appData,
                      services: EngineServices(engine: self, run: run.id))
    }

    /// Whether app code of `run` may still act for it (nil: not tied to a run).
    func accepts(_ run: RunID?) -> Bool {
        guard let run else { return true }
        return isCurrent(run)
    }

    func schedule(app: String, id: String, at date: Date, text: String) {
        announcements.schedule(Announcements.Entry(app: app, id: id, due: clock.instant(at: date), text: text))
    }

    func cancelScheduled(app: String, id: String) {
        announcements.cancel(app: app, id: id)
    }

    /// When a scheduled announcement is due, as a wall-clock date reckoned now.
    func scheduledDate(app: String, id: String) -> Date? {
        announcements.due(app: app, id: id).map { clock.date(at: $0) }
    }
}

/// How apps reach the engine while they run.
struct EngineServices: IntentServices {
    let engine: ConversationEngine
    /// The run whose app code holds these services, if any.
    let run: RunID?

    func donate(app: String, _ request: DonationRequest) async throws {
        // A run cancelled meanwhile donates nothing, even from its own code.
        guard await engine.accepts(run) else { return }
        try await engine.stores.donations.record(Donation(identifier: request.identifier, groupIdentifier: request.groupIdentifier,
            app: app, intent: request.intent, parameters: request.parameters, date: engine.clock.now, trigger: Trigger.app.rawValue))
    }

    func schedule(app: String, id: String, at date: Date, announcement: String) async {
        await engine.schedule(app: app, id: id, at: date, text: announcement)
    }

    func cancelScheduled(app: String, id: String) async {
        await engine.cancelScheduled(app: app, id: id)
    }

    func scheduledDate(app: String, id: String) async -> Date? {
        await engine.scheduledDate(app: app, id: id)
    }

    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] {
        let donations = (try? await engine.stores.donations.donations(app: app, intent: intent, limit: 200)) ?? []
        var seen = Set<String>()
        return donations.compactMap { $0.parameters[parameter] }.filter { seen.insert($0).inserted }.prefix(limit).map { $0 }
    }
}