import ParleyCore
import ParleyWake

/// Direct mode's cheap first stage (`wake.hey_gate`): the command decoders
/// (the command grammar and its phone loop, most of what listening costs
/// while a television talks) start on a commands utterance only once a
/// speech_embedding head for "hey" (model/wake/hey.embedding.json, trained
/// on synthetic voices: no recording of a person saying it exists here)
/// comes within `heyMargin` of its threshold, or once the name's own
/// detector proposes the name. `WakeGate` holds the utterance until then
/// and hands it over whole, so no word is lost. An utterance it never
/// opens on is still decoded at its end when short enough to be a command
/// (`WakeGate.heySeconds`, `unopenedAtEnd`): the head learnt "hey" from
/// synthetic voices alone, so a "hey" it misses costs a later answer, not
/// the command; what the gate saves is the speech that runs on (a
/// television's utterances of 10-15 s), never a command.
///
/// It wraps named mode's detector (nil in direct mode alone): the name is
/// confirmed, proposed and located by that detector exactly as before;
/// "hey" only opens the gate.
public final class HeyGatedWake: WakeDecoding {
    public let name: (any WakeDecoding)?
    public let hey: EmbeddingSpotter
    /// Logits below the hey head's threshold that open the gate: a
    /// permissive line, since a missed "hey" delays the answer (the
    /// utterance is decoded after its end, `unopenedAtEnd`) while a false
    /// open only costs a decode. On synthetic voices it never trained on,
    /// 4 below missed 6 of 48 clean, 8 below 1 (13 opens an hour of real
    /// speech), 10 below none (44 an hour) (BENCHMARKS.md, "A wake word real
    /// speech cannot fool", the hey gate).
    public static let heyMargin = 8.0
    /// How long after the speech starts the hey head listens: "hey" opens a
    /// command, and the head's windows that score it end at most 0.45 s
    /// after the word (its training labels), so a word said in the first
    /// second or so is scored well inside this. Past it the head stops for
    /// the utterance: a television's utterances run on for seconds, and
    /// embedding all of them was most of what the gate cost.
    public static let heyListenSamples = 2 * PCMAudio.sampleRate
    public let leadInSamples: Int
    public private(set) var samplesFed: Int64 = 0
    /// Stream position of the next sample fed (`begin(at:)`'s, then counted on).
    private var position: Int64 = 0
    /// Stream position up to which the hey head's stream has been fed; nil
    /// when it has to start anew.
    private var heyFedTo: Int64?
    /// Stream position past which the hey head hears nothing of this
    /// utterance: `heyListenSamples` after its speech starts.
    private var heyUntil: Int64 = .max

    public init(name: (any WakeDecoding)?, hey: EmbeddingSpotter) {
        self.name = name
        self.hey = hey
        // The head's first window ends 2 s into its stream.
        leadInSamples = max(name?.leadInSamples ?? 0, 2 * PCMAudio.sampleRate)
    }

    /// "hey" was heard near its threshold in the open utterance.
    public var heardHey: Bool { hey.peak >= hey.threshold - Self.heyMargin }

    public var proposed: Bool { name?.proposed ?? false }
    public var opensGate: Bool { heardHey || proposed }
    public var gatesDirectCommands: Bool { true }
    /// The name's detector decides whether a name it never proposed may
    /// still be a command (PocketSphinx's misses names the grammar hears),
    /// as it does without the gate; direct mode alone has no name.
    public var unproposedMayBeCommands: Bool { name?.unproposedMayBeCommands ?? false }
    public var unopenedAtEnd: WakeGate.AtEnd { .decodedWhenShort }
    public var hearsHey: Bool { name?.hearsHey ?? true }
    public var wakeEndSample: Int64? { name?.wakeEndSample }

    public func begin() {
        name?.begin()
        hey.reset()
        heyFedTo = nil
        heyUntil = listenEnd(from: position)
    }

    /// The speech starts a lead-in after where the stream is begun (or
    /// sooner, where the lead-in was cut short at the start of the stream:
    /// then the head listens a little longer, never less).
    private func listenEnd(from begun: Int64) -> Int64 {
        begun + Int64(leadInSamples) + Int64(Self.heyListenSamples)
    }

    /// Why the hey head's stream is taken up where it can be: a lead-in is
    /// 2 s (the head's first window), and a television's utterances come a
    /// fraction of a second apart, so starting anew embedded most of the
    /// audio twice or more. Taken up, the stream already holds the lead-in
    /// (the previous utterance's end and the pause); only the scores are
    /// forgotten, so this utterance's peak is of windows ending in it, as a
    /// new stream's first window ends where its lead-in does. Where the
    /// stream ended before this lead-in starts, it begins anew.
    public func begin(at position: Int64) {
        name?.begin()
        self.position = position
        heyUntil = listenEnd(from: position)
        if let fed = heyFedTo, fed >= position {
            hey.resetScores()
        } else {
            hey.reset()
            heyFedTo = position
        }
    }

    public func feed(_ samples: [Int16]) {
        name?.feed(samples)
        // Once open the gate stays open: the head has nothing more to decide.
        if !heardHey && position < heyUntil {
            // What the stream already holds (a taken-up lead-in) is skipped,
            // and what comes after the listening time is not heard.
            let skip = heyFedTo.map { Int(min(Int64(samples.count), max(0, $0 - position))) } ?? 0
            let end = Int(min(Int64(samples.count), heyUntil - position))
            if skip < end {
                samples.withUnsafeBufferPointer { hey.feed(UnsafeBufferPointer(rebasing: $0[skip..<end])) { _, _ in } }
            }
            heyFedTo = heyFedTo.map { max($0, position + Int64(end)) }
        }
        position += Int64(samples.count)
        samplesFed += Int64(samples.count)
    }

    public func takeFailure() -> (any Error)? { name?.takeFailure() }
    public func phraseProgress() -> PhraseProgress { .extendable }
    public func finish() -> Bool { (try? name?.finish()) ?? false }
    public func cancel() { name?.cancel() }
}
