import Foundation

/// Confirmation, perform, cancel, "forget my history" and the idle press.
extension ConversationEngine {
    // MARK: - Confirmation and perform

    func confirm(_ run: Run) async {
        let context = context(for: run)
        let stakes: String
        do {
            stakes = try await run.intent.confirmationDialog(context: context)
                ?? Dialog.capitalised(run.descriptor.summary(values: run.values)) + "."
        } catch {
            guard isCurrent(run.id) else { return }
            await fail(error)
            return
        }
        guard isCurrent(run.id) else { return }
        let category = run.descriptor.category
        let voiceAllowed = configuration.voiceConfirmableCategories.contains(category)
        guard voiceAllowed || configuration.buttonAvailable else {
            // Only the button could confirm this, and it cannot be read: say so
            // now rather than wait for a press that will never come.
            await log("\(run.key) needs the button, which is unavailable; not performed")
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
        // The doubted value first, so the person listens for it in the read-back.
        let doubt = run.doubted.flatMap { run.values[$0] }.map { Self.slotCheckLine($0) + " " } ?? ""
        phase = .waiting(Waiting(.confirmation(run, voiceAllowed: voiceAllowed), line: "\(doubt)\(stakes) \(instruction)",
                                 window: configuration.confirmationTimeout, from: clock.instant))
        await sayOpenLine()
    }

    /// What is said when a confirmation needs the button and the board has none working.
    static func buttonMissing(_ category: IntentCategory) -> String {
        switch category {
        case .order: "This order needs the button, which is not working, so nothing was ordered."
        case .payment: "This payment needs the button, which is not working, so nothing was paid."
        default: "This needs the button to \(category.confirmationVerb), and the button is not working, so nothing was done."
        }
    }

    func confirmationAnswer(_ text: String, run: Run, voiceAllowed: Bool, _ waiting: Waiting) async {
        await setLED(.thinking)
        let category = run.descriptor.category
        switch RunMachine.confirmation(answer: waiting.resolver.resolve(text), voiceAllowed: voiceAllowed) {
        case .cancel:
            // "No" to a read-back that named a doubted value: that value is
            // asked for again, the rest kept. "Cancel" ends the run.
            if let slot = run.doubted, waiting.resolver.resolve(text)?.target != .builtin(.cancel) {
                await log("\(run.key): the doubted \(slot) was wrong, asking for it")
                await resolve(Self.reasking(slot, of: run))
            } else {
                await cancel()
            }
        case .repeatLine:
            phase = .waiting(waiting.renewed(at: clock.instant))
            await sayOpenLine()
        case .accept:
            await perform(run)
        case .voiceRefused:
            phase = .waiting(waiting.renewed(at: clock.instant))
            let what = category == .payment ? "make a payment" : category == .order ? "place an order" : "confirm this"
            await say("A spoken yes can't \(what). Press the button to \(category.confirmationVerb), or say cancel.")
            await rest()
        case .notUnderstood:
            await notUnderstood(waiting)
        }
    }

    func perform(_ run: Run) async {
        // The race is in place before the first suspension: a cancel (spoken,
        // a long press, a stop) that comes while the LED is set finds it and
        // settles it, and the app's perform then never starts.
        let race = PerformRace()
        phase = .busy(run.id)
        performing = (run.id, race)
        await setLED(.thinking)
        let context = context(for: run)
        let limit = min(run.descriptor.timeLimit, configuration.performTimeLimit ?? .infinity)
        // The perform may take minutes: the next utterance is handled meanwhile ("cancel").
        InputTurn.current?.release()
        let outcome = await withTaskCancellationHandler {
            await race.run(run.intent, context: context, clock: clock, limit: limit)
        } onCancel: {
            race.cancel()
        }
        if performing?.id == run.id { performing = nil }
        // A result whose run was cancelled meanwhile is neither spoken nor
        // donated, even when another run has started since.
        guard isCurrent(run.id) else {
            await log("\(run.key) (\(run.id)) ended after it was cancelled; result dropped")
            return
        }
        switch outcome {
        case .success(let result):
            let parameters = run.givenValues
            let donation = Donation(identifier: result.donationIdentifier, groupIdentifier: result.donationGroup,
                                    app: run.app.identifier, intent: run.descriptor.identifier,
                                    parameters: parameters, date: clock.now, trigger: run.trigger.rawValue)
            do { try await stores.donations.record(donation) } catch { await log("donation not recorded: \(error)") }
            await sink.emit(.performed(PerformedIntent(app: run.app.identifier, intent: run.descriptor.identifier,
                                                       parameters: parameters, output: result.output, trigger: run.trigger.rawValue,
                                                       confirmedWithButton: run.confirmedWithButton)))
            await say(result.spoken)
            await setLED(.success)
            if await shortcutRunPerformed(run, result: result) { return }
            if configuration.tipsEnabled, let tip = guide.tip(after: run) { await say(tip) }
            phase = .idle
            await rest()
        case .failure(let error):
            await fail(error)
        case .timedOut:
            await log("\(run.key) exceeded its time limit")
            phase = .idle
            await say("That took too long and was stopped. Please try again later.")
            await setLED(.error)
            await rest()
        case .cancelled:
            // The task carrying the run was cancelled (shutdown): nothing is said.
            phase = .idle
            await rest()
        }
    }

    func fail(_ error: any Error) async {
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

    /// Ends whatever is open; a run that is performing is stopped.
    func cancel() async {
        // Stopped and closed before the first suspension, so nothing started
        // meanwhile can find the run still open.
        let stopped = performing.flatMap { isCurrent($0.id) ? $0 : nil }
        stopped?.race.cancel()
        phase = .idle
        if let stopped { await log("\(stopped.id) stopped") }
        await say("Cancelled.")
        await rest()
    }

    // MARK: - Privacy (docs/spec.md §7)

    /// "Forget my history": every donation goes, but only after a press.
    func askToForgetHistory() async {
        let count = ((try? await stores.donations.donations(app: nil, intent: nil, limit: nil)) ?? []).count
        guard count > 0 else {
            phase = .idle
            await say("There is no history to forget.")
            await rest()
            return
        }
        guard configuration.buttonAvailable else {
            // Forgetting is confirmed with the button only (docs/spec.md §7), like an order.
            phase = .idle
            await say("Forgetting the history needs the button, which is not working, so nothing was deleted.")
            await setLED(.error)
            await rest()
            return
        }
        let actions = count == 1 ? "one past action" : "\(SpokenNumber.words(count)) past actions"
        let line = "Forget the history of \(actions), and the suggestions learned from it? Press the button to forget it, or say cancel."
        phase = .waiting(Waiting(.forget, line: line, window: configuration.confirmationTimeout, from: clock.instant))
        await sayOpenLine()
    }

    func forgetAnswer(_ text: String, _ waiting: Waiting) async {
        switch RunMachine.confirmation(answer: waiting.resolver.resolve(text), voiceAllowed: false) {
        case .cancel:
            await cancel()
        case .voiceRefused, .accept:
            phase = .waiting(waiting.renewed(at: clock.instant))
            await say("A spoken yes can't delete your history. Press the button to forget it, or say cancel.")
            await rest()
        case .repeatLine, .notUnderstood:
            phase = .waiting(waiting.renewed(at: clock.instant))
            await sayOpenLine()
        }
    }

    func forgetHistory() async {
        phase = .idle
        do {
            let count = try await stores.donations.delete(.all)
            await setLED(.success)
            await say(count == 1 ? "Forgotten. One past action was deleted." : "Forgotten. \(Dialog.capitalised(SpokenNumber.words(count))) past actions were deleted.")
        } catch {
            await log("forgetting the history failed: \(error)")
            await setLED(.error)
            await say("The history could not be deleted. Nothing was changed.")
        }
        await rest()
    }

    // MARK: - Suggestions

    func idlePress() async {
        guard configuration.suggestsOnIdlePress else { await openWindow(); return }
        let found = await suggestions.usualRun(at: clock.now, calendar: configuration.calendar, id: nextRunID(), context: { self.context(app: $0) })
        guard let run = found.run else {
            if let lacking = found.lacking { await log("usual \(lacking) lacks required values; not suggested") }
            await openWindow()
            return
        }
        let offer = await Suggestions.offer(run, context: context(for: run))
        phase = .waiting(Waiting(.suggestion(run), line: offer, window: configuration.buttonWindow, from: clock.instant))
        await sayOpenLine()
    }

    private func openWindow() async {
        phase = .pushToTalk(deadline: clock.instant + configuration.buttonWindow)
        await rest()
    }
}
