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
    func check(_ text: String) async {
        switch commandResolver?.resolve(text)?.target {
        case nil, .builtin(.cancel)?, .builtin(.repeat)?, .builtin(.wake)?, .answer?:
            await command(text, trigger: configuration.voiceTrigger)
        case .intent(let app, let intent, _)? where registry.descriptor(app: app, intent: intent)?.requiresConfirmation == true:
            await log("unsure, its read-back checks it: \(text)")
            await command(text, trigger: configuration.voiceTrigger)
        default:
            await log("unsure, asking back: \(text)")
            phase = .waiting(Waiting(.check(heard: text), line: Self.checkLine(text), window: configuration.answerTimeout,
                                     from: clock.instant))
            await sayOpenLine()
        }
    }

    /// "Did you say: a large latte?": the words as heard, so a misheard
    /// value is what the person hears and answers.
    static func checkLine(_ heard: String) -> String { "Did you say: \(heard)?" }

    /// "Yes" or a press: the command runs as heard.
    func confirmCheck(_ heard: String) async {
        phase = .idle
        await command(heard, trigger: configuration.voiceTrigger)
    }

    func checkAnswer(_ text: String, heard: String, _ waiting: Waiting) async {
        let answer = waiting.resolver.resolve(text)
        if answer?.target == .builtin(.cancel) {
            await cancel()
            return
        }
        switch RunMachine.confirmation(answer: answer, voiceAllowed: true) {
        case .accept, .voiceRefused:
            await confirmCheck(heard)
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
