import ParleyAudio
import ParleyCore

/// Which grammar an utterance is decoded with (docs/spec.md §3).
public enum ListeningKind: Sendable, Equatable {
    /// Wake words required; the wake detector listens too.
    case commands
    /// Commands, wake words optional.
    case window
    /// Answers to the open question.
    case followUp
    /// An open-text answer: the dictation decoder too.
    case dictation
    /// The device is speaking: cancel phrases only, or with its echo
    /// cancelled also the wake words and a command (`WakeGrammar.bargeIn(commands:)`).
    case bargeIn

    /// The segmenter's phrase rules for an utterance of this kind.
    /// `grammarCurrent`: the grammar it is decoded with is still the one
    /// asked for (a stale one is decoded again at the end, so its phrases
    /// decide nothing). Only grammars of whole phrases hold a speech end
    /// for the rest of one (commands and answers: a window's wake-optional
    /// grammar and barge-in's cancel phrases end at the trailing silence),
    /// and open text has no phrases to end early on.
    public func phraseRules(grammarCurrent: Bool) -> PhraseRules {
        PhraseRules(hold: (self == .commands || self == .followUp) && grammarCurrent,
                    earlyEnd: self != .dictation && grammarCurrent)
    }
}

/// What the listening path does with a finished utterance: the decision of
/// the daemon's listener, as a pure function of what the decoders said.
public enum ListeningOutcome: Sendable, Equatable {
    /// A cancel phrase while the device spoke: silence it and cancel.
    case interrupt(heard: String)
    /// The wake words and a command while the device spoke (its echo
    /// cancelled): silence it, and the command (wake words stripped) for the engine.
    case interruptWith(String)
    /// Words for the engine (wake words stripped where they are part of
    /// the grammar); `dictated`: open text from the dictation decoder.
    case text(String, dictated: Bool)
    /// "Hey <name>" alone, confirmed by the wake detector: open a window.
    case woken
    /// Nothing for the engine (counted as a rejection).
    case reject(heard: String, why: String)
    /// Speech over the device's own voice that was not a cancel phrase:
    /// nothing happens and nothing is counted.
    case ignored

    /// Whether the command decoder's result is a command (not "hey <name>" alone).
    static func isCommand(_ result: CommandResult) -> Bool {
        guard let match = result.match else { return false }
        return match.target != WakeGrammar.aloneTarget
    }

    /// Whether `decide` will look at the dictation decoder's text (so it
    /// is only decoded when needed).
    public static func needsDictation(kind: ListeningKind, command: CommandResult) -> Bool {
        kind == .dictation && command.match == nil
    }

    /// Whether `decide` will look at the wake detector's verdict (so the
    /// rest of the stream is only fed to it when needed).
    public static func needsWake(kind: ListeningKind, command: CommandResult) -> Bool {
        kind == .commands && !isCommand(command)
    }

    /// The decision. `dictated`: the dictation decoder's text, when
    /// `needsDictation` (nil when it failed or was not asked); `woke`:
    /// whether the wake detector confirmed its phrase in the utterance.
    public static func decide(kind: ListeningKind, command: CommandResult, dictated: String?, woke: Bool,
                              wake: WakeGrammar) -> ListeningOutcome {
        if kind == .bargeIn {
            guard let match = command.match else { return .ignored }
            if match.target == .builtin(PhraseCompiler.Builtin.cancel) { return .interrupt(heard: command.transcript) }
            let words = command.transcript.split(separator: " ").map(String.init)
            return .interruptWith(wake.strip(words).joined(separator: " "))
        }
        if isCommand(command) {
            let words = command.transcript.split(separator: " ").map(String.init)
            let kept = kind == .followUp || kind == .dictation ? words : wake.strip(words)
            return .text(kept.joined(separator: " "), dictated: false)
        }
        if kind == .dictation, let dictated, !dictated.isEmpty, needsDictation(kind: kind, command: command) {
            return .text(dictated, dictated: true)
        }
        if kind == .commands && woke { return .woken }
        return .reject(heard: command.transcript, why: command.rejection ?? "wake not confirmed")
    }
}

extension ListeningOutcome {
    /// Why a noisy command said without the name is dropped
    /// (`unaddressed`); the listener's log and tests read it.
    public static let unaddressedReason = "unsure in noise, and said without the wake word"

    /// Direct mode's answer to noise. "Hey" and a short built-in ("hey
    /// mute", "hey volume one") is all the evidence a direct command has
    /// that someone spoke to the device, and kitchen noise makes that much
    /// from clatter: 13 commands in 600 s of kitchen.wav, every one of them
    /// one the ask rule was unsure of, and the question it then asked was
    /// answered by the noise ("ok", "speak up") and the volume changed. So
    /// a command heard in idle listening (`kind` `.commands`) without the
    /// wake word's name, in the ask rule's noisy band (estimated SNR below
    /// `AskRule.splitSNR`), that the rule would ask back, is dropped
    /// instead: nobody is asked a question they may not have been there to
    /// hear, and a person who did say it says it again with the name
    /// ("hey computer, ..."), whose keyword detector is what holds in
    /// noise. Everything else is as `decide` said: a confident direct
    /// command, a quiet-room one (asked back as before), one with the
    /// name, a window's, an answer. `saidName`: whether the utterance began
    /// with the wake word's name, asked only for a command that would be
    /// dropped (the listener asks its wake detector, not only the words:
    /// the grammar can force the name onto noise as well as "hey"; its
    /// first stage's proposal is enough, as for `WakeGate`). The listener
    /// passes the shipped rule's lines also when asking is off
    /// (`speech.ask_unsure: false`): that setting acts on unsure commands
    /// instead of asking, and noise must not get that either.
    public static func unaddressed(_ outcome: ListeningOutcome, kind: ListeningKind, command: CommandResult,
                                   askRule: AskRule, saidName: () -> Bool) -> ListeningOutcome {
        guard kind == .commands, case .text(_, dictated: false) = outcome, askRule.asks(command),
              let evidence = command.evidence, askRule.isNoisy(evidence), !saidName() else { return outcome }
        return .reject(heard: command.transcript, why: unaddressedReason)
    }

    /// Why an unsure volume phrase heard while a question is open is
    /// dropped (`unsureVolumeInConversation`); the listener's log and tests read it.
    public static let unsureVolumeReason = "an unsure volume phrase while a question is open"

    /// The volume phrases work inside a conversation too and leave it as it
    /// was (`PhraseCompiler.Builtin.isVolume`), so an answer's grammar
    /// carries them, and what is heard as an answer is never asked back
    /// (it is already a turn of a conversation). Other people's talk makes
    /// them: after the device asked "Did you say: what's in notebook?" of
    /// a "jarvis" that it took for a command, the next two "jarvis"
    /// were heard as "turn it up", at confidences the ask rule asks back
    /// in idle listening, and the volume went up twice (the daemon on the
    /// wake-other recordings, BENCHMARKS.md "The rejection reads the room").
    /// Asking back there would replace the open question with another, so
    /// a volume phrase heard as an answer (`kind` `.followUp` or
    /// `.dictation`) that the ask rule is unsure of is dropped instead; the
    /// question stays open, and a person who meant it says it again. As
    /// with `unaddressed`, the listener passes the shipped rule's lines
    /// also when asking is off. A sure volume phrase, any other answer and
    /// every other kind are as `decide` said.
    public static func unsureVolumeInConversation(_ outcome: ListeningOutcome, kind: ListeningKind, command: CommandResult,
                                                  askRule: AskRule) -> ListeningOutcome {
        guard kind == .followUp || kind == .dictation, case .text(_, dictated: false) = outcome,
              case .builtin(let builtin)? = command.match?.target, builtin.isVolume, askRule.asks(command) else { return outcome }
        return .reject(heard: command.transcript, why: unsureVolumeReason)
    }

    /// An interruption decided over the device's voice with its echo
    /// cancelled, through `EchoGate`. `adapted`: whether the canceller had
    /// adapted when the utterance began; before, it cannot tell a person
    /// from the device, so what was heard before echo cancellation stays
    /// (a cancel phrase) and a command over the device does not count.
    /// `keptDecibels`: the energy the canceller kept of the microphone over
    /// the utterance (asked only when needed). `ownSpeech`: what the device
    /// has just been saying; before the canceller has adapted, a cancel
    /// phrase that is in it (after the wake words `wake` takes off) is the
    /// device's own voice ("To stop me talking, say stop": without
    /// cancellation such lines interrupted the device 35 times an hour).
    /// `meetsBaseThreshold`: whether the words' confidence reached the
    /// recogniser's threshold before its allowance for noise; before the
    /// canceller has adapted, that "noise" is mostly the device's own
    /// voice, so a cancel phrase gets no allowance for it (in the simulated
    /// room the device's first line after a start, "Your clam chowder soup
    /// is on its way", was heard as "cancel that" at -1.3, below the -1.0
    /// threshold, 14.5 dB under the microphone).
    public static func gated(_ outcome: ListeningOutcome, adapted: Bool, keptDecibels: () -> Double,
                             threshold: Double = EchoGate.defaultThresholdDecibels,
                             ownSpeech: OwnSpeech = OwnSpeech([]), wake: WakeGrammar? = nil,
                             meetsBaseThreshold: Bool = true) -> ListeningOutcome {
        switch outcome {
        case .interrupt, .interruptWith: break
        default: return outcome
        }
        guard adapted else {
            if case .interruptWith = outcome { return .ignored }
            if case .interrupt(let heard) = outcome {
                if !meetsBaseThreshold { return .ignored }
                let words = PhraseText.normalise(heard)
                let phrase = wake?.strip(words) ?? words
                if !phrase.isEmpty && ownSpeech.says(phrase) { return .ignored }
            }
            return outcome
        }
        return EchoGate.accepts(keptDecibels: keptDecibels(), threshold: threshold) ? outcome : .ignored
    }
}

/// What the device has just been saying, as normalised words (the Speaker's
/// last lines): a cancel phrase heard over its voice that it is itself
/// saying is its own, when the echo canceller cannot yet tell
/// (`ListeningOutcome.gated`).
public struct OwnSpeech: Sendable, Equatable {
    public let words: [String]
    /// How many of the device's last lines count (the Speaker keeps them,
    /// `parley-bench audio echo-room` picks them): one answer may be queued as a few.
    public static let lines = 3

    public init(_ texts: [String]) {
        words = texts.flatMap { PhraseText.normalise($0) }
    }

    /// Whether `phrase` (normalised words) occurs in what was said, its
    /// words in order and next to each other.
    public func says(_ phrase: [String]) -> Bool {
        guard !phrase.isEmpty, phrase.count <= words.count else { return false }
        return (0...(words.count - phrase.count)).contains { start in
            words[start..<(start + phrase.count)].elementsEqual(phrase)
        }
    }
}
