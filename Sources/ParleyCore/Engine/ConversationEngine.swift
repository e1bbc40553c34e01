import Foundation
import Synchronization

/// The conversation engine (SPEC 5): turns what a person says and presses
/// into resolved, confirmed, performed intents, and reports everything a
/// person perceives to an output sink.
///
/// Inputs: `hear(_:confidence:)`, `button(_:)`, `tick()` after the clock
/// moves, `setMuted(_:)`. Outputs: `EngineEvent`s in order.
public actor ConversationEngine {
    public let registry: AppRegistry
    public let stores: ParleyStores
    public let clock: any ParleyClock
    public let sink: any EngineOutputSink
    public private(set) var configuration: EngineConfiguration

    private var commandModel = PhraseModel()
    private var commandResolver: Resolver?
    private var phase: Phase = .idle
    private var led: DeviceState?
    private var muted = false
    private var lastLine: String?
    private var tipped = Set<String>()
    private var scheduled: [Announcement] = []

    public init(registry: AppRegistry, stores: ParleyStores, clock: any ParleyClock,
                sink: any EngineOutputSink, configuration: EngineConfiguration = EngineConfiguration()) {
        self.registry = registry
        self.stores = stores
        self.clock = clock
        self.sink = sink
        self.configuration = configuration
    }

    // MARK: - State

    struct Run: Sendable {
        var app: any ParleyApp
        var descriptor: IntentDescriptor
        var intent: any AppIntent
        /// Canonical values, proposed or resolved.
        var values: [String: String]
        /// Parameters settled by the person's answer to a list or a confirmation.
        var settled: Set<String> = []
        var index = 0
        var questions = 0
        /// Parameters the person was asked about (for the tip: a shorter phrase must carry one).
        var asked: Set<String> = []
        var trigger: String
    }

    enum PendingKind: Sendable {
        case value(ParameterDefinition)
        case disambiguation(ParameterDefinition)
        case confirmValue(ParameterDefinition, ParameterOption)
    }

    struct Pending: Sendable {
        var run: Run
        var kind: PendingKind
        var question: FollowUpQuestion
        var resolver: Resolver
        var line: String
        var reasked = false
        var deadline: Date
    }

    struct Confirming: Sendable {
        var run: Run
        var line: String
        var voiceAllowed: Bool
        var resolver: Resolver
        var reasked = false
        var deadline: Date
    }

    enum Phase: Sendable {
        case idle
        case pushToTalk(deadline: Date)
        case asking(Pending)
        case confirming(Confirming)
        case suggesting(Run, deadline: Date)
        /// "Forget my history" awaits the button.
        case forgetting(Forgetting)
        case busy
    }

    struct Forgetting: Sendable {
        var line: String
        var reasked = false
        var deadline: Date
    }

    struct Announcement: Sendable {
        var app: String
        var id: String
        var date: Date
        var text: String
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
        case .asking(let pending) where pending.question.expectation == .text:
            .dictation(FollowUpGrammar.model(for: pending.question))
        case .asking(let pending): .followUp(FollowUpGrammar.model(for: pending.question))
        case .confirming(let confirming): .followUp(FollowUpGrammar.model(for: FollowUpQuestion(prompt: confirming.line, expectation: .confirmation(voiceAllowed: confirming.voiceAllowed))))
        case .pushToTalk: .window
        case .forgetting(let forgetting): .followUp(FollowUpGrammar.model(for: FollowUpQuestion(prompt: forgetting.line, expectation: .confirmation(voiceAllowed: false))))
        default: .commands
        }
    }

    /// Whether a conversation is open (a question, a confirmation, a suggestion).
    public var isConversationOpen: Bool {
        if case .idle = phase { return false }
        return true
    }

    /// Compiles the phrase model from the apps and the stored custom phrases.
    public func reloadPhrases() async {
        let custom = (try? await stores.customPhrases.customPhrases()) ?? []
        commandModel = await registry.phraseModel(customPhrases: custom, context: { self.context(app: $0) })
        commandResolver = Resolver(model: commandModel)
    }

    /// A person's own phrase for an intent with fixed values ("Add to Siri").
    /// Refused when it clashes with a phrase the device already understands.
    public func addCustomPhrase(_ phrase: String, app: String, intent: String, parameters: [String: String]) async throws {
        await prepare()
        let words = PhraseText.normalise(phrase)
        guard !words.isEmpty else { throw IntentError("The phrase '\(phrase)' has no words.") }
        let target = try registry.canonicalTarget(app: app, intent: intent, parameters: parameters)
        if let existing = commandResolver?.resolve(words: words) {
            throw IntentError("The phrase '\(phrase)' clashes with an existing phrase (\(existing.ruleID)).")
        }
        try await stores.customPhrases.save(CustomPhrase(phrase: phrase, app: target.app, intent: target.intent,
                                                         parameters: target.parameters, created: clock.now))
        await reloadPhrases()
    }

    /// Custom phrases, oldest first.
    public func customPhrases() async throws -> [CustomPhrase] {
        try await stores.customPhrases.customPhrases()
    }

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
        case .idle, .pushToTalk, .suggesting:
            await handleCommand(text)
        case .asking(let pending):
            await handleAnswer(text, pending)
        case .confirming(let confirming):
            await handleConfirmation(text, confirming)
        case .forgetting(let forgetting):
            await handleForgetAnswer(text, forgetting)
        case .busy:
            if commandResolver?.resolve(text)?.target == .builtin(PhraseCompiler.Builtin.cancel) { await cancel() }
        }
    }

    /// The named wake word was heard alone ("hey computer"): a window of
    /// `seconds` opens in which a command needs no wake word, as after a
    /// button press. Ignored while a conversation is open or muted.
    public func woken(window seconds: TimeInterval) async {
        await prepare()
        switch phase {
        case .idle, .pushToTalk:
            guard !muted else { await log("muted, wake ignored"); return }
            phase = .pushToTalk(deadline: clock.now + seconds)
            await sink.emit(.sound("wake"))
            await rest()
        case .asking, .confirming, .suggesting, .forgetting, .busy:
            await log("wake ignored: a conversation is open")
        }
    }

    /// A button gesture.
    public func button(_ gesture: ButtonGesture) async {
        await prepare()
        switch gesture {
        case .longPress:
            if case .idle = phase { await setLED(muted ? .muted : .idle) } else { await cancel() }
        case .doublePress:
            if let phrase = configuration.doublePressPhrase, !isConversationOpen {
                await handleCommand(phrase, trigger: "button")
            } else {
                await log("double press: nothing configured")
            }
        case .press:
            switch phase {
            case .confirming(let confirming): await perform(confirming.run)
            case .suggesting(let run, _): await perform(run)
            case .forgetting: await forgetHistory()
            case .idle: await idlePress()
            case .pushToTalk: phase = .idle; await rest()
            case .asking, .busy: await log("press ignored while a question is open")
            }
        }
    }

    /// Re-evaluates everything that depends on time: answer time-outs,
    /// button windows, scheduled announcements. Call after the clock moves.
    ///
    /// `deviceSpeaking`: the device's voice is still playing. A person can
    /// only answer a question once they have heard it, so while it plays the
    /// waiting window does not run: each open deadline is held at a full
    /// window from now, which makes the window start when the voice stops
    /// (a long confirmation line would otherwise eat most of a short one).
    public func tick(deviceSpeaking: Bool = false) async {
        let now = clock.now
        let due = scheduled.filter { $0.date <= now }.sorted { $0.date < $1.date }
        scheduled.removeAll { $0.date <= now }
        for announcement in due {
            await sink.emit(.sound("chime"))
            await say(announcement.text)
            await rest()
        }
        if deviceSpeaking {
            holdDeadlines(from: now)
            return
        }
        switch phase {
        case .asking(var pending) where now >= pending.deadline:
            if pending.reasked { await giveUp(); return }
            pending.reasked = true
            pending.deadline = now + configuration.answerTimeout
            phase = .asking(pending)
            await say(pending.line)
            await rest()
        case .confirming(var confirming) where now >= confirming.deadline:
            if confirming.reasked { await giveUp(); return }
            confirming.reasked = true
            confirming.deadline = now + configuration.confirmationTimeout
            phase = .confirming(confirming)
            await say(confirming.line)
            await rest()
        case .forgetting(var forgetting) where now >= forgetting.deadline:
            if forgetting.reasked { await giveUp(); return }
            forgetting.reasked = true
            forgetting.deadline = now + configuration.confirmationTimeout
            phase = .forgetting(forgetting)
            await say(forgetting.line)
            await rest()
        case .pushToTalk(let deadline) where now >= deadline:
            phase = .idle
            await rest()
        case .suggesting(_, let deadline) where now >= deadline:
            phase = .idle
            await rest()
        default:
            break
        }
    }

    /// Pushes every open waiting deadline to at least a full window after `now`.
    private func holdDeadlines(from now: Date) {
        func held(_ deadline: Date, _ window: TimeInterval) -> Date { max(deadline, now + window) }
        switch phase {
        case .asking(var pending):
            pending.deadline = held(pending.deadline, configuration.answerTimeout)
            phase = .asking(pending)
        case .confirming(var confirming):
            confirming.deadline = held(confirming.deadline, configuration.confirmationTimeout)
            phase = .confirming(confirming)
        case .forgetting(var forgetting):
            forgetting.deadline = held(forgetting.deadline, configuration.confirmationTimeout)
            phase = .forgetting(forgetting)
        case .pushToTalk(let deadline):
            phase = .pushToTalk(deadline: held(deadline, configuration.buttonWindow))
        case .suggesting(let run, let deadline):
            phase = .suggesting(run, deadline: held(deadline, configuration.buttonWindow))
        case .idle, .busy:
            break
        }
    }

    /// The mute switch: while muted nothing is heard; the button still works.
    public func setMuted(_ muted: Bool) async {
        self.muted = muted
        await rest()
    }

    // MARK: - Commands

    private func prepare() async {
        if commandResolver == nil { await reloadPhrases() }
    }

    private func handleCommand(_ text: String, trigger: String? = nil) async {
        guard let resolution = commandResolver?.resolve(text) else {
            await log("not understood: \(text)")
            return
        }
        let wasOpen = isConversationOpen
        await setLED(.listening)
        await setLED(.thinking)
        switch resolution.target {
        case .builtin(PhraseCompiler.Builtin.cancel):
            if wasOpen { await cancel() } else { await rest() }
        case .builtin(PhraseCompiler.Builtin.repeat):
            if let lastLine { await say(lastLine) }
            await rest()
        case .builtin(PhraseCompiler.Builtin.help):
            phase = .idle
            await sayHelp()
        case .builtin(PhraseCompiler.Builtin.forgetHistory):
            await askToForgetHistory()
        case .builtin(PhraseCompiler.Builtin.appHelp):
            phase = .idle
            await sayAppHelp(resolution.values[PhraseCompiler.appBinding] ?? "")
        case .intent(let appID, let intentID, _):
            guard let app = registry.app(appID), let descriptor = registry.descriptor(app: appID, intent: intentID) else {
                await log("no intent \(appID).\(intentID)")
                await rest()
                return
            }
            let run = Run(app: app, descriptor: descriptor, intent: descriptor.type.init(), values: resolution.values,
                          trigger: trigger ?? configuration.voiceTrigger)
            await log("resolved \(resolution.ruleID) \(resolution.values)")
            await advance(run)
        default:
            await rest()
        }
    }

    // MARK: - Resolution (SPEC 5)

    /// Resolves parameters in declaration order, then confirms, then performs.
    private func advance(_ start: Run) async {
        var run = start
        let parameters = IntentReflection.parameters(of: run.intent)
        let context = context(app: run.app.identifier)
        while run.index < run.descriptor.parameters.count {
            let definition = run.descriptor.parameters[run.index]
            let storage = parameters.first { $0.name == definition.name }?.parameter
            if let parent = definition.parent, !parent.values.contains(run.values[parent.parameter] ?? "") {
                run.values[definition.name] = nil
                _ = try? await storage?.assign(canonical: nil, context: context)
                run.index += 1
                continue
            }
            let proposed = run.values[definition.name]
            let resolution: ParameterResolution
            do {
                if let proposed, run.settled.contains(definition.name) {
                    resolution = .success(proposed)
                } else if let custom = try await run.intent.resolve(parameter: definition.name, proposed: proposed, context: context) {
                    resolution = custom
                } else {
                    resolution = await defaultResolution(definition, proposed: proposed, run: run, context: context)
                }
            } catch {
                await fail(error)
                return
            }
            switch resolution {
            case .success(let value):
                if let storage, !(((try? await storage.assign(canonical: value, context: context)) ?? false)) {
                    run.values[definition.name] = nil
                    await say("That \(definition.title.lowercased()) isn't available.")
                    await ask(definition, prompt: nil, run: run)
                    return
                }
                run.values[definition.name] = value
                run.index += 1
            case .notRequired:
                run.values[definition.name] = nil
                _ = try? await storage?.assign(canonical: nil, context: context)
                run.index += 1
            case .needsValue(let prompt):
                run.values[definition.name] = nil
                await ask(definition, prompt: prompt, run: run)
                return
            case .disambiguation(let options, let prompt):
                await ask(definition, prompt: prompt, run: run, disambiguation: options)
                return
            case .confirmation(let option, let prompt):
                await confirmValue(definition, option: option, prompt: prompt, run: run)
                return
            case .unsupported(let reason):
                run.values[definition.name] = nil
                run.settled.remove(definition.name)
                await say(reason)
                await ask(definition, prompt: nil, run: run)
                return
            }
        }
        if run.intent.confirmationNeeded {
            await confirm(run)
        } else {
            await perform(run)
        }
    }

    private func defaultResolution(_ definition: ParameterDefinition, proposed: String?, run: Run,
                                   context: IntentContext) async -> ParameterResolution {
        if let proposed {
            if let bounds = definition.bounds, let number = Double(proposed), let reason = bounds.violation(number) {
                return .unsupported(reason: reason)
            }
            return .success(proposed)
        }
        if let value = definition.defaultValue { return .success(value) }
        if definition.kind == .entity, let option = try? await definition.valueType.defaultOption(context: context) {
            return .success(option.id)
        }
        if definition.isOptional { return .notRequired }
        if let usual = await usualOption(definition, run: run, context: context) {
            return .confirmation(usual, prompt: "\(Dialog.capitalised(usual.spoken)), as usual?")
        }
        return .needsValue(prompt: nil)
    }

    /// The usual value from donations, proposed instead of an open question.
    private func usualOption(_ definition: ParameterDefinition, run: Run, context: IntentContext) async -> ParameterOption? {
        guard let donations = try? await stores.donations.donations(app: run.app.identifier, intent: run.descriptor.identifier, limit: 200) else { return nil }
        let earlier = run.descriptor.parameters.prefix(run.index).compactMap { p in run.values[p.name].map { (p.name, $0) } }
        guard let value = Habits.usualValue(of: definition.name, given: Dictionary(earlier, uniquingKeysWith: { a, _ in a }), in: donations) else { return nil }
        let options = (try? await definition.valueType.options(context: context)) ?? definition.staticOptions ?? []
        return options.first { $0.id == value } ?? (definition.kind.isOpen ? ParameterOption(id: value, title: value) : nil)
    }

    private func ask(_ definition: ParameterDefinition, prompt: String?, run start: Run, disambiguation: [ParameterOption]? = nil) async {
        var run = start
        let context = context(app: run.app.identifier)
        let all: [ParameterOption]
        let listed: [ParameterOption]
        let spokenItems: [String]
        if let disambiguation {
            all = disambiguation
            listed = Array(disambiguation.prefix(5))
            spokenItems = Dialog.distinctiveTitles(listed)
        } else {
            all = ((try? await definition.valueType.options(context: context)) ?? nil) ?? []
            let suggested = definition.kind == .entity ? all : (definition.valueType.suggestedOptions ?? all)
            listed = suggested.count <= 5 ? suggested : []
            spokenItems = listed.map(\.spoken)
        }
        let expectation: FollowUpQuestion.Expectation
        if !all.isEmpty, definition.kind != .duration {
            expectation = .options(all, listed: listed)
        } else {
            switch definition.kind {
            case .integer, .decimal: expectation = .number
            case .duration: expectation = .duration
            case .boolean: expectation = .yesNo
            default: expectation = .text
            }
        }
        let line = Dialog.question(prompt ?? definition.prompt, options: spokenItems)
        let question = FollowUpQuestion(prompt: line, expectation: expectation)
        run.questions += 1
        run.asked.insert(definition.name)
        let kind: PendingKind = disambiguation == nil ? .value(definition) : .disambiguation(definition)
        phase = .asking(Pending(run: run, kind: kind, question: question, resolver: Resolver(model: FollowUpGrammar.model(for: question)),
                                line: line, deadline: clock.now + configuration.answerTimeout))
        await say(line)
        await rest()
    }

    private func confirmValue(_ definition: ParameterDefinition, option: ParameterOption, prompt: String?, run start: Run) async {
        var run = start
        run.questions += 1
        run.asked.insert(definition.name)
        let line = prompt ?? "\(Dialog.capitalised(option.spoken)), right?"
        let question = FollowUpQuestion(prompt: line, expectation: .yesNo)
        phase = .asking(Pending(run: run, kind: .confirmValue(definition, option), question: question,
                                resolver: Resolver(model: FollowUpGrammar.model(for: question)), line: line,
                                deadline: clock.now + configuration.answerTimeout))
        await say(line)
        await rest()
    }

    private func handleAnswer(_ text: String, _ pending: Pending) async {
        await setLED(.thinking)
        var run = pending.run
        guard let answer = pending.resolver.resolve(text) else {
            if case .value(let definition) = pending.kind {
                if case .text = pending.question.expectation, !text.trimmingCharacters(in: .whitespaces).isEmpty {
                    run.values[definition.name] = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    await advance(run)
                    return
                }
                if definition.kind == .entity {
                    let found = (try? await definition.valueType.lookup(text, context: context(app: run.app.identifier))) ?? []
                    if found.count == 1 {
                        run.values[definition.name] = found[0].id
                        run.settled.insert(definition.name)
                        await advance(run)
                        return
                    }
                    if found.count > 1 {
                        await ask(definition, prompt: nil, run: run, disambiguation: found)
                        return
                    }
                }
            }
            await notUnderstood(pending)
            return
        }
        switch answer.target {
        case .builtin(PhraseCompiler.Builtin.cancel):
            await cancel()
            return
        case .builtin(PhraseCompiler.Builtin.repeat):
            await say(pending.line)
            await rest()
            return
        default:
            break
        }
        switch pending.kind {
        case .confirmValue(let definition, let option):
            if answer.values[FollowUpGrammar.yesNo] == "yes" {
                run.values[definition.name] = option.id
                run.settled.insert(definition.name)
                await advance(run)
            } else if answer.values[FollowUpGrammar.yesNo] == "no" {
                await ask(definition, prompt: nil, run: run)
            } else {
                await notUnderstood(pending)
            }
        case .value(let definition), .disambiguation(let definition):
            let value: String?
            var listedChoice = false
            if let option = answer.values[FollowUpGrammar.option] {
                value = option
                listedChoice = true
            } else if let ordinal = answer.values[FollowUpGrammar.ordinal].flatMap(Int.init),
                      case .options(_, let listed) = pending.question.expectation, ordinal >= 1, ordinal <= listed.count {
                value = listed[ordinal - 1].id
                listedChoice = true
            } else {
                value = answer.values[FollowUpGrammar.number] ?? answer.values[FollowUpGrammar.duration]
                    ?? answer.values[FollowUpGrammar.yesNo].map { $0 == "yes" ? "true" : "false" }
            }
            guard let value else { await notUnderstood(pending); return }
            run.values[definition.name] = value
            if case .disambiguation = pending.kind, listedChoice { run.settled.insert(definition.name) }
            await advance(run)
        }
    }

    private func notUnderstood(_ pending: Pending) async {
        var pending = pending
        pending.deadline = clock.now + configuration.answerTimeout
        phase = .asking(pending)
        await say("Sorry? \(pending.line)")
        lastLine = pending.line
        await rest()
    }

    // MARK: - Confirmation and perform

    private func confirm(_ run: Run) async {
        let context = context(app: run.app.identifier)
        let stakes: String
        do {
            stakes = try await run.intent.confirmationDialog(context: context)
                ?? Dialog.capitalised(run.descriptor.summary(values: run.values)) + "."
        } catch {
            await fail(error)
            return
        }
        let category = run.descriptor.category
        let voiceAllowed = configuration.voiceConfirmableCategories.contains(category)
        guard voiceAllowed || configuration.buttonAvailable else {
            // Only the button could confirm this, and it cannot be read: say so
            // now rather than wait for a press that will never come.
            await log("\(run.app.identifier).\(run.descriptor.identifier) needs the button, which is unavailable; not performed")
            phase = .idle
            await say(Self.buttonMissing(category))
            await setLED(.error)
            await rest()
            return
        }
        let instruction: String
        if !voiceAllowed {
            instruction = "Press the button to \(category.confirmationVerb), or say cancel."
        } else if configuration.buttonAvailable {
            instruction = "Say yes or press the button to \(category.confirmationVerb), or say cancel."
        } else {
            instruction = "Say yes to \(category.confirmationVerb), or say cancel."
        }
        let line = "\(stakes) \(instruction)"
        let question = FollowUpQuestion(prompt: line, expectation: .confirmation(voiceAllowed: voiceAllowed))
        phase = .confirming(Confirming(run: run, line: line, voiceAllowed: voiceAllowed,
                                       resolver: Resolver(model: FollowUpGrammar.model(for: question)),
                                       deadline: clock.now + configuration.confirmationTimeout))
        await say(line)
        await rest()
    }

    /// What is said when a confirmation needs the button and the board has none working.
    static func buttonMissing(_ category: IntentCategory) -> String {
        switch category {
        case .order: "This order needs the button, which is not working, so nothing was ordered."
        case .payment: "This payment needs the button, which is not working, so nothing was paid."
        default: "This needs the button to \(category.confirmationVerb), and the button is not working, so nothing was done."
        }
    }

    private func handleConfirmation(_ text: String, _ confirming: Confirming) async {
        await setLED(.thinking)
        let answer = confirming.resolver.resolve(text)
        let category = confirming.run.descriptor.category
        var renewed = confirming
        renewed.deadline = clock.now + configuration.confirmationTimeout
        switch (answer?.target, answer?.values[FollowUpGrammar.yesNo]) {
        case (.builtin(PhraseCompiler.Builtin.cancel)?, _), (_, "no"):
            await cancel()
        case (.builtin(PhraseCompiler.Builtin.repeat)?, _):
            phase = .confirming(renewed)
            await say(confirming.line)
            await rest()
        case (_, "yes"):
            if confirming.voiceAllowed {
                await perform(confirming.run)
            } else {
                phase = .confirming(renewed)
                let what = category == .payment ? "make a payment" : category == .order ? "place an order" : "confirm this"
                await say("A spoken yes can't \(what). Press the button to \(category.confirmationVerb), or say cancel.")
                await rest()
            }
        default:
            phase = .confirming(renewed)
            await say("Sorry? \(confirming.line)")
            lastLine = confirming.line
            await rest()
        }
    }

    // MARK: - Privacy (SPEC 7)

    /// "Forget my history": every donation goes, but only after a press.
    private func askToForgetHistory() async {
        let count = ((try? await stores.donations.donations(app: nil, intent: nil, limit: nil)) ?? []).count
        guard count > 0 else {
            phase = .idle
            await say("There is no history to forget.")
            await rest()
            return
        }
        guard configuration.buttonAvailable else {
            // Forgetting is confirmed with the button only (SPEC 7), like an order.
            phase = .idle
            await say("Forgetting the history needs the button, which is not working, so nothing was deleted.")
            await setLED(.error)
            await rest()
            return
        }
        let actions = count == 1 ? "one past action" : "\(SpokenNumber.words(count)) past actions"
        let line = "Forget the history of \(actions), and the suggestions learned from it? Press the button to forget it, or say cancel."
        phase = .forgetting(Forgetting(line: line, deadline: clock.now + configuration.confirmationTimeout))
        await say(line)
        await rest()
    }

    private func handleForgetAnswer(_ text: String, _ forgetting: Forgetting) async {
        let answer = Resolver(model: FollowUpGrammar.model(for: FollowUpQuestion(prompt: forgetting.line, expectation: .confirmation(voiceAllowed: false)))).resolve(text)
        var renewed = forgetting
        renewed.deadline = clock.now + configuration.confirmationTimeout
        switch (answer?.target, answer?.values[FollowUpGrammar.yesNo]) {
        case (.builtin(PhraseCompiler.Builtin.cancel)?, _), (_, "no"):
            await cancel()
        case (_, "yes"):
            phase = .forgetting(renewed)
            await say("A spoken yes can't delete your history. Press the button to forget it, or say cancel.")
            await rest()
        default:
            phase = .forgetting(renewed)
            await say(forgetting.line)
            await rest()
        }
    }

    private func forgetHistory() async {
        phase = .idle
        do {
            let count = try await stores.donations.delete(.all)
            await setLED(.success)
            await say(count == 1 ? "Forgotten. One past action was deleted." : "Forgotten. \(SpokenNumber.words(count).prefix(1).uppercased() + SpokenNumber.words(count).dropFirst()) past actions were deleted.")
        } catch {
            await log("forgetting the history failed: \(error)")
            await setLED(.error)
            await say("The history could not be deleted. Nothing was changed.")
        }
        await rest()
    }

    enum PerformOutcome: Sendable {
        case success(IntentResult)
        case failure(any Error)
        case timedOut
    }

    /// Resumes a continuation once, from whichever of perform and its time limit finishes first.
    final class Race: Sendable {
        private let state = Mutex<(continuation: CheckedContinuation<PerformOutcome, Never>?, tasks: [Task<Void, Never>])>((nil, []))
        func start(_ continuation: CheckedContinuation<PerformOutcome, Never>) { state.withLock { $0.continuation = continuation } }
        func add(_ task: Task<Void, Never>) { state.withLock { $0.tasks.append(task) } }
        func finish(_ outcome: PerformOutcome) {
            let (continuation, tasks) = state.withLock { state in
                defer { state.continuation = nil }
                return (state.continuation, state.tasks)
            }
            guard let continuation else { return }
            tasks.forEach { $0.cancel() }
            continuation.resume(returning: outcome)
        }
    }

    private func runWithTimeLimit(_ intent: any AppIntent, context: IntentContext, limit: TimeInterval) async -> PerformOutcome {
        let race = Race()
        let clock = self.clock
        let deadline = clock.now + limit
        return await withCheckedContinuation { continuation in
            race.start(continuation)
            race.add(Task.detached {
                do { race.finish(.success(try await intent.perform(context: context))) } catch { race.finish(.failure(error)) }
            })
            race.add(Task.detached {
                do {
                    try await clock.sleep(until: deadline)
                    race.finish(.timedOut)
                } catch {}
            })
        }
    }

    private func perform(_ run: Run) async {
        phase = .busy
        await setLED(.thinking)
        let context = context(app: run.app.identifier)
        let limit = min(type(of: run.intent).timeLimit, configuration.performTimeLimit ?? .infinity)
        let outcome = await runWithTimeLimit(run.intent, context: context, limit: limit)
        guard case .busy = phase else { return } // cancelled meanwhile
        switch outcome {
        case .success(let result):
            let parameters = run.values.filter { !$0.value.isEmpty }
            let donation = Donation(identifier: result.donationIdentifier, groupIdentifier: result.donationGroup,
                                    app: run.app.identifier, intent: run.descriptor.identifier,
                                    parameters: parameters, date: clock.now, trigger: run.trigger)
            do { try await stores.donations.record(donation) } catch { await log("donation not recorded: \(error)") }
            await sink.emit(.performed(PerformedIntent(app: run.app.identifier, intent: run.descriptor.identifier,
                                                       parameters: parameters, output: result.output, trigger: run.trigger)))
            await say(result.spoken)
            await setLED(.success)
            await tip(run)
            phase = .idle
            await rest()
        case .failure(let error):
            await fail(error)
        case .timedOut:
            await log("\(run.app.identifier).\(run.descriptor.identifier) exceeded its time limit")
            phase = .idle
            await say("That took too long and was stopped. Please try again later.")
            await setLED(.error)
            await rest()
        }
    }

    private func fail(_ error: any Error) async {
        await log("app error: \(error)")
        phase = .idle
        if let intentError = error as? IntentError {
            await say("That didn't work. \(intentError.spokenMessage)")
        } else {
            await say("That didn't work because of a problem in the app. Nothing was done.")
        }
        await setLED(.error)
        await rest()
    }

    private func cancel() async {
        phase = .idle
        await say("Cancelled.")
        await rest()
    }

    private func giveUp() async {
        phase = .idle
        await say("No answer heard, so nothing was done.")
        await rest()
    }

    // MARK: - Suggestions, help, tips

    private func idlePress() async {
        let donations = configuration.suggestsOnIdlePress
            ? (try? await stores.donations.donations(app: nil, intent: nil, limit: 500)) ?? [] : []
        if let usual = Habits.suggestion(at: clock.now, from: donations),
           let app = registry.app(usual.app), let descriptor = registry.descriptor(app: usual.app, intent: usual.intent) {
            let run = Run(app: app, descriptor: descriptor, intent: descriptor.type.init(), values: usual.parameters,
                          settled: Set(usual.parameters.keys), trigger: "button")
            // Resolve silently so the intent instance holds the values; anything missing falls back to a conversation.
            let context = context(app: app.identifier)
            var complete = true
            for (name, parameter) in IntentReflection.parameters(of: run.intent) {
                let assigned = (try? await parameter.assign(canonical: usual.parameters[name], context: context)) ?? false
                guard !assigned, let definition = descriptor.parameter(name) else { continue }
                let parentCalls = definition.parent.map { $0.values.contains(usual.parameters[$0.parameter] ?? "") } ?? true
                if parentCalls && !definition.isOptional && definition.defaultValue == nil { complete = false }
            }
            guard complete else {
                // A past run that no longer fills every required parameter is not offered.
                await log("usual \(usual.app).\(usual.intent) lacks required values; not suggested")
                phase = .pushToTalk(deadline: clock.now + configuration.buttonWindow)
                await rest()
                return
            }
            phase = .suggesting(run, deadline: clock.now + configuration.buttonWindow)
            // The stakes as the app states them ("one tomato soup ... three dollars twenty five."), else the summary.
            let stakes = ((try? await run.intent.confirmationDialog(context: context)) ?? nil)
                ?? descriptor.summary(values: usual.parameters) + "."
            let verb = descriptor.category.requiresConfirmation ? descriptor.category.confirmationVerb : "do it"
            await say("Your usual at this time: \(stakes.prefix(1).lowercased() + stakes.dropFirst()) Press again to \(verb).")
            await rest()
        } else {
            phase = .pushToTalk(deadline: clock.now + configuration.buttonWindow)
            await rest()
        }
    }

    /// Example phrases of the apps, most used intents first.
    private func examples(for apps: [any ParleyApp]) async -> [String] {
        let donations = (try? await stores.donations.donations(app: nil, intent: nil, limit: 1000)) ?? []
        let usage = Habits.usageCounts(donations)
        var ranked: [(phrase: String, score: Int, order: Int)] = []
        let custom = (try? await stores.customPhrases.customPhrases()) ?? []
        if apps.count == registry.apps.count {
            for phrase in custom { ranked.append((phrase.phrase, usage["\(phrase.app).\(phrase.intent)", default: 0], ranked.count)) }
        }
        for app in apps {
            for shortcut in app.shortcuts {
                guard let phrase = shortcut.phrases.first else { continue }
                let example = render(phrase, app: app, intent: shortcut.intent.identifier, values: [:])
                ranked.append((example, usage["\(app.identifier).\(shortcut.intent.identifier)", default: 0], ranked.count))
            }
        }
        return ranked.sorted { $0.score != $1.score ? $0.score > $1.score : $0.order < $1.order }.map(\.phrase)
    }

    private func sayHelp() async {
        let top = Array(await examples(for: registry.apps).prefix(5))
        await say("You can say: \(Dialog.list(top)).")
        await rest()
    }

    private func sayAppHelp(_ appID: String) async {
        guard let app = registry.app(appID) else { await rest(); return }
        let titles = app.shortcuts.prefix(5).map { $0.shortTitle.prefix(1).lowercased() + $0.shortTitle.dropFirst() }
        let example = await examples(for: [app]).first
        var line = "\(app.name) can \(Dialog.list(titles, conjunction: "and"))."
        if let example { line += " For example, say: \(example)." }
        await say(line)
        await rest()
    }

    /// A phrase written out: `{app}` becomes the app's name (dropped for the
    /// primary app), a parameter its value or its first option.
    private func render(_ phrase: String, app: any ParleyApp, intent: String, values: [String: String]) -> String {
        var tokens = PhraseToken.tokens(of: phrase)
        if app.identifier == registry.primaryApp { tokens = PhraseCompiler.withoutAppName(tokens) }
        let descriptor = registry.descriptor(app: app.identifier, intent: intent)
        return tokens.map { token -> String in
            switch token {
            case .word(let word): return word
            case .appName: return app.name
            case .parameter(let name):
                let definition = descriptor?.parameter(name)
                let options = definition?.valueType.suggestedOptions ?? definition?.staticOptions ?? []
                if let value = values[name] {
                    return (definition?.staticOptions ?? options).first { $0.id == value }?.title ?? value
                }
                return options.first?.title ?? name
            }
        }.joined(separator: " ")
    }

    private func tip(_ run: Run) async {
        let key = "\(run.app.identifier).\(run.descriptor.identifier)"
        guard configuration.tipsEnabled, run.questions >= 2, !tipped.contains(key) else { return }
        let shortcuts = run.app.shortcuts.filter { $0.intent.identifier == run.descriptor.identifier }
        // The tip must be worth saying: a phrase that would run the very same
        // action and spares a question the person had to answer. "Order
        // tomato with Soup Chef" after a delivery order would quietly order
        // for pickup (the default), so it is never offered then.
        guard let phrase = shortcuts.flatMap(\.phrases).first(where: { phrase in
            let carried = Self.parameters(in: phrase)
            return carried.contains { run.asked.contains($0) } && Self.reproduces(run, carrying: carried)
        }) else { return }
        tipped.insert(key)
        await say("Next time, just say: \(render(phrase, app: run.app, intent: run.descriptor.identifier, values: run.values)).")
    }

    private static func parameters(in phrase: String) -> [String] {
        PhraseToken.tokens(of: phrase).compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// Whether a phrase carrying `carried` (filled with the run's values)
    /// would run with the run's values: each carried value must be known, and
    /// each parameter left out must not differ from the default it would take.
    private static func reproduces(_ run: Run, carrying carried: [String]) -> Bool {
        for name in carried where (run.values[name] ?? "").isEmpty { return false }
        for definition in run.descriptor.parameters where !carried.contains(definition.name) {
            // nil: a child its parent did not call for, which the phrase would skip the same way.
            guard let value = run.values[definition.name], !value.isEmpty, let fallback = definition.defaultValue else { continue }
            if value != fallback { return false }
        }
        return true
    }

    // MARK: - Output

    private func say(_ line: String) async {
        await setLED(.speaking)
        lastLine = line
        await sink.emit(.spoke(line))
    }

    private func setLED(_ state: DeviceState) async {
        guard led != state else { return }
        led = state
        await sink.emit(.led(state))
    }

    /// The LED state of the current phase, once speaking is over.
    private func rest() async {
        switch phase {
        case .asking, .pushToTalk: await setLED(muted ? .muted : .listening)
        case .confirming, .suggesting, .forgetting: await setLED(.awaitingConfirmation)
        case .busy: await setLED(.thinking)
        case .idle: await setLED(muted ? .muted : .idle)
        }
        await sink.emit(.listening(listeningMode))
    }

    private func log(_ message: String) async { await sink.emit(.log(message)) }

    // MARK: - Services for apps

    nonisolated func context(app: String) -> IntentContext {
        IntentContext(app: app, now: clock.now, appData: stores.appData, services: EngineServices(engine: self))
    }

    func schedule(_ announcement: Announcement) {
        scheduled.removeAll { $0.app == announcement.app && $0.id == announcement.id }
        scheduled.append(announcement)
    }

    func cancelScheduled(app: String, id: String) {
        scheduled.removeAll { $0.app == app && $0.id == id }
    }
}

extension AppIntent {
    var confirmationNeeded: Bool { Self.requiresConfirmation }
}

/// How apps reach the engine while they run.
struct EngineServices: IntentServices {
    let engine: ConversationEngine

    func donate(app: String, _ request: DonationRequest) async throws {
        try await engine.stores.donations.record(Donation(identifier: request.identifier, groupIdentifier: request.groupIdentifier,
            app: app, intent: request.intent, parameters: request.parameters, date: engine.clock.now, trigger: "app"))
    }

    func schedule(app: String, id: String, at date: Date, announcement: String) async {
        await engine.schedule(ConversationEngine.Announcement(app: app, id: id, date: date, text: announcement))
    }

    func cancelScheduled(app: String, id: String) async {
        await engine.cancelScheduled(app: app, id: id)
    }

    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] {
        let donations = (try? await engine.stores.donations.donations(app: app, intent: intent, limit: 200)) ?? []
        var seen = Set<String>()
        return donations.compactMap { $0.parameters[parameter] }.filter { seen.insert($0).inserted }.prefix(limit).map { $0 }
    }
}
