import Foundation

/// Asking back a command heard with low confidence (issue 26 item 3). In
/// noise the recogniser acts on wrong commands: kitchen noise at 6 dB made
/// one in three a wrong action. A command the listener marks unsure is said
/// back as a question; "yes" (or a press) runs it as heard, "no" drops it
/// and opens a window to say it again without the wake word.
extension ConversationEngine {
    /// The question for an unsure command. "cancel" and "repeat" run at
    /// once (stopping must never wait for a question, and a repeated line
    /// costs nothing); everything else, help and the volume included, is
    /// asked: in noise a misheard "help" is a long list said for nothing.
    /// An intent confirmed before it runs (an order, a payment, a deletion)
    /// is not asked either: its read-back names what was understood and
    /// waits for a yes or a press, so a second check before it would ask
    /// the same thing twice.
    ///
    /// `doubted` (issue 49): the words the recogniser is unsure of. When
    /// they are all one slot's value, that slot alone is asked back
    /// ("Large, did I hear that right?"; for an order, first in its
    /// read-back), and a "no" asks for that value again and keeps the rest.
    func check(_ text: String, doubted: [String] = []) async {
        let resolution = commandResolver?.resolve(text)
        let slot = resolution.flatMap { Self.doubtedSlot($0.values, doubted: doubted) }
        switch resolution?.target {
        case nil, .builtin(.cancel)?, .builtin(.repeat)?, .builtin(.wake)?, .answer?:
            await command(text, trigger: configuration.voiceTrigger)
        case .intent(let app, let intent, _)? where registry.descriptor(app: app, intent: intent)?.requiresConfirmation == true:
            await log("unsure, its read-back checks it\(slot.map { " (\($0) first)" } ?? ""): \(text)")
            await command(text, trigger: configuration.voiceTrigger, doubted: slot)
        default:
            let line = slot.flatMap { name in resolution?.values[name] }.map(Self.slotCheckLine) ?? Self.checkLine(text)
            await log("unsure, asking back\(slot.map { " its \($0)" } ?? ""): \(text)")
            phase = .waiting(Waiting(.check(heard: text, slot: slot), line: line, window: configuration.answerTimeout,
                                     from: clock.instant))
            await sayOpenLine()
        }
    }

    /// "Did you say: a large latte?": the words as heard, so a misheard
    /// value is what the person hears and answers.
    static func checkLine(_ heard: String) -> String { "Did you say: \(heard)?" }

    /// "Large, did I hear that right?": one value in doubt, as resolved.
    static func slotCheckLine(_ value: String) -> String { "\(Dialog.capitalised(value)), did I hear that right?" }

    /// The parameter whose value all of `doubted` are words of, or nil: no
    /// doubt, a doubted word of no value (the intent's own words: the
    /// command as a whole is in doubt) or words of two values.
    public static func doubtedSlot(_ values: [String: String], doubted: [String]) -> String? {
        guard !doubted.isEmpty else { return nil }
        var owners: Set<String> = []
        for word in doubted {
            let owning = values.filter { $0.value.lowercased().split(separator: " ").contains(Substring(word.lowercased())) }.keys
            guard !owning.isEmpty else { return nil }
            owners.formUnion(owning)
        }
        return owners.count == 1 ? owners.first : nil
    }

    /// `run` with `slot`'s value dropped and asked for again (with the
    /// parameter's own question, whatever its default or habit), from that
    /// parameter on; the values after it are kept as they were.
    static func reasking(_ slot: String, of start: Run) -> Run {
        var run = start
        run.doubted = nil
        run.values[slot] = nil
        run.settled.remove(slot)
        run.askEachTime.updateValue(nil, forKey: slot)
        run.index = min(run.index, run.descriptor.parameters.firstIndex { $0.name == slot } ?? 0)
        return run
    }

    /// "Yes" or a press: the command runs as heard.
    func confirmCheck(_ heard: String) async {
        phase = .idle
        await command(heard, trigger: configuration.voiceTrigger)
    }

    func checkAnswer(_ text: String, heard: String, slot: String?, _ waiting: Waiting) async {
        let answer = waiting.resolver.resolve(text)
        if answer?.target == .builtin(.cancel) {
            await cancel()
            return
        }
        switch RunMachine.confirmation(answer: answer, voiceAllowed: true) {
        case .accept, .voiceRefused:
            await confirmCheck(heard)
        case .cancel where slot != nil:
            // "No" to one value: that one is asked for, the rest kept.
            phase = .idle
            await command(heard, trigger: configuration.voiceTrigger, reasking: slot)
        case .cancel:
            // "No": nothing is done, and the next words need no wake word.
            phase = .pushToTalk(deadline: clock.instant + configuration.buttonWindow)
            await say("Okay. Say it again.")
            await rest()
        case .repeatLine:
            phase = .waiting(waiting.renewed(at: clock.instant))
            await sayOpenLine()
        case .notUnderstood:
            await notUnderstood(waiting)
        }
    }
}
