import Foundation

/// A shortcut being run: its step machine and what it is waiting for.
struct ShortcutActivity: Sendable {
    var execution: ShortcutExecution
    var trigger: Trigger
    /// The intent run it started and awaits.
    var runID: RunID?
    /// A `wait:` in progress: the engine is busy with `waitID` until `waitUntil`.
    var waitUntil: ParleyInstant?
    var waitID: RunID?
}

/// Multi-step shortcuts (docs/shortcuts.md) carried out by the engine: each
/// `run` goes through the same resolution, questions, confirmation and
/// button rules as a spoken intent (an order inside a shortcut still needs
/// the button, whatever started it); cancel or a long press stops the whole
/// shortcut and what was already performed is said.
extension ConversationEngine {
    // MARK: - Public API

    /// The loaded shortcuts; their phrases join the phrase model.
    public func setShortcuts(_ library: ShortcutLibrary) async {
        shortcuts = library
        timePlan = TimeTriggerPlan(shortcuts: library.shortcuts, now: clock.now, calendar: configuration.calendar)
        await reloadPhrases()
        // The recogniser compiles its grammar from this event, off the listening thread.
        await sink.emit(.listening(listeningMode))
    }

    public var shortcutLibrary: ShortcutLibrary { shortcuts }

    /// Clock times from now on are in `zone`: time triggers are planned
    /// again ("at 7:00" is 7:00 there), and the time a shortcut says and the
    /// habits of the day follow it.
    public func setTimeZone(_ zone: TimeZone) {
        configuration.calendar.timeZone = zone
        timePlan = TimeTriggerPlan(shortcuts: shortcuts.shortcuts, now: clock.now, calendar: configuration.calendar)
    }

    /// Whether a shortcut is running.
    public var isRunningShortcut: Bool { shortcutActivity != nil }

    /// Runs a shortcut by name (`parley shortcuts run NAME`, a trigger).
    /// False when there is no such shortcut or a conversation is open.
    @discardableResult
    public func runShortcut(named name: String, trigger: Trigger = .shortcut) async -> Bool {
        await prepare()
        guard let shortcut = shortcuts.shortcut(named: name) else {
            await log("no shortcut named \(name)")
            return false
        }
        switch phase {
        case .idle, .pushToTalk: break
        case .waiting, .busy:
            await log("shortcut \(shortcut.name) not started: a conversation is open")
            return false
        }
        await log("shortcut \(shortcut.name) started by \(trigger)")
        shortcutActivity = ShortcutActivity(
            execution: ShortcutExecution(shortcut, trigger: trigger.rawValue, library: shortcuts.shortcuts, calendar: configuration.calendar),
            trigger: trigger)
        phase = .idle
        await setLED(.thinking)
        await advanceShortcut()
        return true
    }

    /// A named board input changed (`active`: its rising edge): the
    /// shortcuts with a matching `input:` trigger run.
    public func input(_ name: String, active: Bool) async {
        let edge: InputEdge = active ? .rising : .falling
        for shortcut in shortcuts.shortcuts
        where shortcut.triggers.contains(where: { $0.trigger == .input(name: name, edge: edge) }) {
            await runShortcut(named: shortcut.name, trigger: .automation)
        }
    }

    // MARK: - Hooks from the rest of the engine

    /// The shortcut a button gesture triggers when nothing is open, if any.
    func shortcutTriggered(by gesture: ButtonGesture) -> Shortcut? {
        shortcuts.shortcuts.first { $0.triggers.contains { $0.trigger == .button(gesture) } }
    }

    /// Time triggers due now (the plan made again first if the wall clock jumped).
    func runDueTimeTriggers(wallClockJumped: Bool) async {
        if wallClockJumped { timePlan.replan(now: clock.now) }
        for name in timePlan.due(now: clock.now) {
            await runShortcut(named: name, trigger: .automation)
        }
    }

    /// A shortcut's `wait:` that is over.
    func finishShortcutWait() async {
        guard let activity = shortcutActivity, let until = activity.waitUntil, let id = activity.waitID,
              clock.instant >= until, isCurrent(id) else { return }
        shortcutActivity?.waitUntil = nil
        shortcutActivity?.waitID = nil
        await advanceShortcut()
    }

    /// The intent run `run` performed: if a shortcut awaits it, the shortcut
    /// goes on (and true is returned: no tip, the shortcut speaks next).
    func shortcutRunPerformed(_ run: Run, result: IntentResult) async -> Bool {
        guard let activity = shortcutActivity, activity.runID == run.id else { return false }
        let summary = Self.lowercasedFirst(run.descriptor.summary(values: run.values))
        shortcutActivity?.execution.ran(spoken: result.spoken, output: result.output, summary: summary)
        shortcutActivity?.runID = nil
        await advanceShortcut()
        return true
    }

    /// Called as the engine comes to rest: a shortcut whose step ended
    /// without going on (cancelled, refused, failed, unanswered) stops here,
    /// saying what it had already done.
    func stopShortcutIfAbandoned() async {
        guard case .idle = phase, let activity = shortcutActivity, !shortcutAdvancing else { return }
        shortcutActivity = nil
        await log("shortcut \(activity.execution.shortcut.name) stopped")
        await say(activity.execution.stoppedLine)
        await setLED(muted ? .muted : .idle)
    }

    /// "Nobody pressed the button": what an automation says when it gives up on a confirmation.
    func shortcutGiveUpLine(_ waiting: Waiting) -> String? {
        guard shortcutActivity != nil, case .confirmation(let run, _) = waiting.kind else { return nil }
        let what = run.descriptor.category == .order ? "ordered" : "done"
        return "Nobody pressed the button, so nothing was \(what)."
    }

    /// Another phrase for a loaded shortcut, stored with the custom phrases
    /// (listed and deleted as they are); refused when it clashes.
    public func addShortcutPhrase(_ phrase: String, shortcut name: String) async throws {
        await prepare()
        guard let shortcut = shortcuts.shortcut(named: name) else {
            let loaded = shortcuts.shortcuts.map(\.name)
            throw IntentError("There is no shortcut '\(name)'" + (loaded.isEmpty ? "; none is loaded." : "; loaded: \(loaded.joined(separator: ", ")).") )
        }
        let words = PhraseText.normalise(phrase)
        try await phrases.checkBounds(phrase, words: words)
        if let existing = Resolver(model: await phraseModel()).resolve(words: words) {
            throw IntentError("The phrase '\(phrase)' clashes with an existing phrase (\(existing.ruleID)).")
        }
        try await stores.customPhrases.save(CustomPhrase(phrase: phrase, app: CustomPhrase.shortcutApp, intent: shortcut.name,
                                                         parameters: [:], created: clock.now))
        await reloadPhrases()
    }

    /// "what does lunch time do?"
    func describeShortcut(_ name: String) async {
        phase = .idle
        if let shortcut = shortcuts.shortcut(named: name) {
            await say("\(shortcut.name): \(ShortcutSummary.describe(shortcut, registry: registry))")
        }
        await rest()
    }

    // MARK: - Carrying the steps out

    /// Carries out the shortcut's next instructions until it waits for
    /// something (an answer, a run, time) or ends.
    func advanceShortcut() async {
        shortcutAdvancing = true
        defer { shortcutAdvancing = false }
        while var activity = shortcutActivity {
            let instruction = activity.execution.next()
            shortcutActivity = activity
            switch instruction {
            case .speak(let line):
                await say(line)
            case .led(let state):
                await setLED(state)
            case .sound(let name):
                if let sound = EngineSound(rawValue: name) { await sink.emit(.sound(sound)) }
            case .wait(let seconds):
                let id = nextRunID()
                activity.waitID = id
                activity.waitUntil = clock.instant + seconds
                shortcutActivity = activity
                phase = .busy(id)
                await rest()
                return
            case .ask(let question, let type, let options):
                askForShortcut(question, type: type, options: options)
                await sayOpenLine()
                return
            case .run(let appID, let intentID, let values, let askEachTime):
                guard let app = registry.app(appID) ?? registry.app(named: appID),
                      let descriptor = registry.descriptor(app: app.identifier, intent: intentID)
                        ?? app.intents.first(where: { $0.identifier.lowercased() == intentID.lowercased() })
                            .flatMap({ registry.descriptor(app: app.identifier, intent: $0.identifier) })
                else {
                    await log("shortcut step \(appID).\(intentID): no such intent")
                    shortcutActivity = nil
                    phase = .idle
                    await say("\(activity.execution.stoppedLine) \(appID) is not installed.")
                    return
                }
                var run = Run(id: nextRunID(), app: app, descriptor: descriptor, values: values,
                              settled: Set(values.keys), trigger: activity.trigger)
                run.askEachTime = askEachTime
                activity.runID = run.id
                shortcutActivity = activity
                await log("shortcut step \(run.key) \(values) by \(activity.trigger)")
                shortcutAdvancing = false
                await resolve(run)
                return
            case .finished:
                shortcutActivity = nil
                await log("shortcut \(activity.execution.shortcut.name) finished")
                phase = .idle
                shortcutAdvancing = false
                await rest()
                return
            }
        }
    }

    /// Opens the question of an `ask` or `choose` action.
    private func askForShortcut(_ question: String, type: AnswerType, options: [String]?) {
        let expectation: FollowUpQuestion.Expectation
        var line = question
        if let options {
            let parameterOptions = options.map { ParameterOption(id: $0, title: $0) }
            expectation = .options(parameterOptions, listed: Array(parameterOptions.prefix(5)))
            if !question.contains(options[0]) { line = Dialog.question(question, options: options.count <= 5 ? options : []) }
        } else {
            switch type {
            case .text: expectation = .text
            case .number: expectation = .number
            case .duration: expectation = .duration
            case .yesNo: expectation = .yesNo
            }
        }
        let followUp = FollowUpQuestion(prompt: line, expectation: expectation)
        phase = .waiting(Waiting(.shortcutQuestion(followUp), line: line, window: configuration.answerTimeout, from: clock.instant))
    }

    /// The answer to a shortcut's question.
    func shortcutAnswer(_ text: String, _ question: FollowUpQuestion, _ waiting: Waiting) async {
        await setLED(.thinking)
        let resolution = waiting.resolver.resolve(text)
        switch resolution?.target {
        case .builtin(.cancel)?: await cancel(); return
        case .builtin(.repeat)?: await sayOpenLine(); return
        default: break
        }
        var value: String?
        if let answer = resolution {
            if let option = answer.values[FollowUpGrammar.option] {
                value = option
            } else if let ordinal = answer.values[FollowUpGrammar.ordinal].flatMap(Int.init),
                      case .options(_, let listed) = question.expectation, ordinal >= 1, ordinal <= listed.count {
                value = listed[ordinal - 1].id
            } else {
                value = answer.values[FollowUpGrammar.number] ?? answer.values[FollowUpGrammar.duration]
                    ?? answer.values[FollowUpGrammar.yesNo]
            }
        } else if case .text = question.expectation {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            value = trimmed.isEmpty ? nil : trimmed
        }
        guard let value else {
            await notUnderstood(waiting)
            return
        }
        shortcutActivity?.execution.answered(value)
        phase = .idle
        await advanceShortcut()
    }

    static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
