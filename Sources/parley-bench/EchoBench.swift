import ArgumentParser
import Foundation
import ParleyApps
import ParleyAudio
import ParleyCore
import ParleySpeech

/// `parley-bench audio device-speech`: the device's own voice (espeak-ng as
/// the Speaker runs it) reading varied lines, answers, timers and notes,
/// many holding the wake word, "stop" or "cancel", with pauses between
/// them: what the microphone hears of the device in the simulated room
/// (training/bin/eval-echo.sh). Writes the 16 kHz WAV and a TSV of each line's
/// first and last sample and text.
struct DeviceSpeech: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device-speech", abstract: "Synthesise the device's own speech (varied lines) into a 16 kHz WAV.")

    @Option(help: "Minutes of audio, at least (pauses included: about four fifths is speech).") var minutes: Double = 80
    @Option(help: "Seed of the lines and pauses.") var seed: UInt64 = 28
    @Option(help: "Output WAV.") var out: String
    @Option(help: "Output TSV: first sample, end sample, text per line.") var lines: String

    func run() throws {
        guard minutes > 0 else { throw ValidationError("--minutes \(minutes): expected a positive number") }
        let synth = try SpeechSynthesizer()
        var rng = SeededRandom(seed: seed)
        var audio: [Int16] = []
        var table = ""
        let total = Int(minutes * 60 * 16_000)
        while audio.count < total {
            let line = DeviceLines.next(&rng)
            let spoken = try synth.render16k(line).samples
            table += "\(audio.count)\t\(audio.count + spoken.count)\t\(line)\n"
            audio += spoken
            // A pause as between answers, or a conversation's turns.
            audio += [Int16](repeating: 0, count: 16_000 * (4 + Int(rng.next() % 16)) / 10)
        }
        try WAVFile.write(audio, sampleRate: 16_000, to: URL(fileURLWithPath: out))
        try table.write(toFile: lines, atomically: true, encoding: .utf8)
        emit(String(format: "device speech: %.1f min, %d lines", Double(audio.count) / 16_000 / 60,
                    table.split(separator: "\n").count))
    }
}

/// What the device says, from templates of its bundled apps' answers, the
/// guide's hints and a person's notes read back. Chosen to be hard for its
/// own ears: the wake word, "hey computer", "stop" and "cancel" come up in
/// them, as do coffee orders that are commands when a person says them.
enum DeviceLines {
    static let drinks = ["latte", "cappuccino", "americano", "espresso", "mocha", "flat white", "macchiato", "cold brew"]
    static let sizes = ["small", "medium", "large", "twelve ounce", "sixteen ounce"]
    static let soups = ["tomato", "clam chowder", "minestrone", "chicken noodle", "lentil"]
    static let notes = [
        "stop at the bakery on the way home", "cancel the dentist appointment on Friday",
        "the computer in the study needs a new power supply", "ask Sam whether the bus stops at the station",
        "buy milk, coffee and eggs", "call the plumber about the kitchen tap", "cancel the newspaper while we are away",
        "hey computer is what the children call the speaker", "order a large latte for Dana at nine",
        "water the plants and stop the sprinkler", "pick up the parcel from the post office",
        "the computer club meets on Tuesday", "remember to cancel the gym membership", "stop buying bread on Mondays",
        "book the car in for its service", "send the photos to grandma", "return the library books",
    ]
    static let templateCount = 18

    /// Template `index` filled in from `r`.
    static func template(_ index: Int, _ r: inout SeededRandom) -> String {
        switch index {
        case 0: return "Your \(pick(sizes, &r)) \(pick(drinks, &r)) is ready."
        case 1: return "I ordered a \(pick(sizes, &r)) \(pick(drinks, &r)) with \(1 + r.next() % 3) shots. It will be ready in \(2 + r.next() % 9) minutes."
        case 2: return "Should I order a \(pick(sizes, &r)) \(pick(drinks, &r))? Press the button to confirm, or say cancel."
        case 3: return "Which soup would you like? \(pick(soups, &r)), \(pick(soups, &r)) or \(pick(soups, &r))?"
        case 4: return "Your \(pick(soups, &r)) soup is on its way. Soup Chef says it will arrive in \(15 + r.next() % 30) minutes."
        case 5: return "Okay, a timer for \(1 + r.next() % 59) minutes, starting now."
        case 6: return "Your timer for \(1 + r.next() % 59) minutes is done. Say stop to silence it."
        case 7: return "You have \(2 + r.next() % 6) timers running. The next one ends in \(1 + r.next() % 20) minutes."
        case 8: return "Here is your note: \(pick(notes, &r))."
        case 9: return "You have \(2 + r.next() % 8) notes. The first one says: \(pick(notes, &r)). The second one says: \(pick(notes, &r))."
        case 10: return "I saved your note: \(pick(notes, &r))."
        case 11: return "To wake me, say hey computer, then what you would like. To stop me talking, say stop."
        case 12: return "You can say hey computer, order a \(pick(sizes, &r)) \(pick(drinks, &r)), or hey computer, set a timer for ten minutes."
        case 13: return "I did not catch that. You can say cancel, or try again after hey computer."
        case 14: return "Okay, I cancelled your \(pick(drinks, &r)) order."
        case 15: return "It is \(1 + r.next() % 12) \(["o'clock", "fifteen", "thirty", "forty five"][Int(r.next() % 4)]). Your next timer stops at \(1 + r.next() % 12) thirty."
        case 16: return "The computer found \(2 + r.next() % 9) shortcuts. The newest is called coffee time; say hey computer, coffee time to run it."
        case 17: return "I will stop reminding you about \(pick(notes, &r))."
        default: preconditionFailure("template \(index) of \(templateCount)")
        }
    }

    static func pick(_ items: [String], _ rng: inout SeededRandom) -> String { items[Int(rng.next() % UInt64(items.count))] }

    static func next(_ rng: inout SeededRandom) -> String {
        template(Int(rng.next() % UInt64(templateCount)), &rng)
    }
}

/// SplitMix64: the same lines for the same seed on every machine.
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `parley-bench audio echo-room`: one simulated-room microphone signal
/// (training/bin/eval-echo.sh makes it: the device's speech through a room
/// impulse response, a person's words added) through the listening path
/// while the device speaks: the echo canceller (`--echo`) with the played
/// speech as its reference, the endpointer and the barge-in grammar
/// (`WakeGrammar.bargeIn(commands:)`: cancel phrases, and the wake word
/// before a command). Each utterance decided is a stop (a cancel phrase) or
/// a wake (a command); it is counted heard when it overlaps a person's
/// event of that kind, misheard when it overlaps another of the person's
/// events (or one already heard), false (the device's own voice) otherwise. `--erle`: the microphone holds the
/// echo alone; prints the echo return loss enhancement instead.
struct EchoRoom: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-room", abstract: "Listen to a simulated room's microphone while the device speaks (echo cancelled or not).")

    @Option(help: "Microphone WAV (16 kHz mono).") var mic: String
    @Option(help: "What the device played, as the reference: sample i was played when microphone sample i + --reference-offset was captured.")
    var reference: String
    @Option(help: "Reference placement in samples (the latency ALSA's delays account for).") var referenceOffset = 0
    @Option(help: "Events TSV: kind (stop|wake), first sample, end sample, label.") var events: String?
    @Option(help: "off, on or linear, optionally :tail ms (as speech.echo_cancel).") var echo = "on"
    @Option(help: "Capture front end after the canceller (as speech.front_end).") var frontEnd = "none"
    @Flag(help: "The microphone holds the echo alone: print the ERLE in dB (after --settle seconds).") var erle = false
    @Option(help: "Seconds of convergence left out of the ERLE.") var settle: Double = 5
    @Option(help: "Decoder setting name=value (repeatable).") var set: [String] = []
    @Flag(help: "Print every decided utterance.") var verbose = false
    @Flag(help: "Cancel phrases alone (the barge-in grammar without echo cancellation, as before issue 28).")
    var cancelOnly = false
    @Option(help: "EchoGate threshold in dB (utterance energy kept by the canceller; -200: no gate).")
    var gate: Double = EchoGate.defaultThresholdDecibels
    @Option(help: "The device's lines (device-speech --lines TSV): what it was saying at each utterance, as the daemon's Speaker tells the listener (OwnSpeech).")
    var lines: String?

    struct Event {
        var kind: String
        var range: Range<Int64>
        var label: String
        var heardAs: String?
    }

    func run() throws {
        let echoSettings: EchoSettings, frontEndSettings: FrontEndSettings
        do { echoSettings = try EchoSettings(parsing: echo) } catch { throw ValidationError("--echo \(echo): \(error)") }
        do { frontEndSettings = try FrontEndSettings(parsing: frontEnd) } catch { throw ValidationError("--front-end \(frontEnd): \(error)") }
        let (micSamples, micRate) = try WAVFile.read(URL(fileURLWithPath: mic))
        let (played, playedRate) = try WAVFile.read(URL(fileURLWithPath: reference))
        guard micRate == 16_000, playedRate == 16_000 else { throw ValidationError("--mic and --reference: expected 16 kHz mono WAVs") }
        let recorded = RecordedReference(played, offset: Int64(referenceOffset))
        if erle {
            try printERLE(micSamples, recorded, echoSettings)
            return
        }
        var list = try events.map(Self.readEvents) ?? []
        let spoken = try lines.map(Self.readLines) ?? []
        // The Speaker's last lines when an utterance began: those queued by then.
        func saying(at position: Int64) -> [String] {
            let reference = position - Int64(referenceOffset)
            let upTo = spoken.lastIndex { $0.start <= reference }.map { $0 + 1 } ?? 0
            return spoken[max(0, upTo - OwnSpeech.lines)..<upTo].map(\.text)
        }
        let model = cancelOnly ? Self.wake.bargeIn : try Self.bargeInModel()
        let wake = Self.wake
        let decoder = try StreamingCommandDecoder(model: model, settings: decoderSettings(set))
        var driver = ListeningDriver()
        var cleaned: [Int16] = []
        // Where the canceller had adapted (as the listener asks it at each utterance's start).
        let adaptedAt = Self.adaptedPosition(played, offset: referenceOffset)
        var falseStops: [String] = [], falseWakes: [String] = [], misheard: [String] = []
        let started = DispatchTime.now().uptimeNanoseconds
        let heard: (DecodedUtterance<CommandResult>) -> Bool = { decoded in
            let outcome = ListeningOutcome.decide(kind: .bargeIn, command: decoded.result, dictated: nil, woke: false, wake: wake)
            let kind: String
            switch outcome {
            case .interrupt: kind = "stop"
            case .interruptWith: kind = "wake"
            default:
                if verbose {
                    emit(String(format: "ignored %.2f-%.2f s: %@ (%@)", Double(decoded.range.lowerBound) / 16_000,
                                Double(decoded.range.upperBound) / 16_000, decoded.result.transcript, decoded.result.rejection ?? ""))
                }
                return false
            }
            let range = decoded.range
            let kept = EchoGate.keptDecibels(microphone: micSamples[Int(range.lowerBound)..<Int(range.upperBound)],
                                            cleaned: cleaned[Int(range.lowerBound)..<Int(range.upperBound)])
            if verbose {
                emit(String(format: "%@ %.2f-%.2f s kept %.1f dB confidence %.2f: %@", kind, Double(range.lowerBound) / 16_000,
                            Double(range.upperBound) / 16_000, kept, decoded.result.confidence, decoded.result.transcript))
            }
            if echoSettings.isActive,
               ListeningOutcome.gated(outcome, adapted: range.lowerBound >= adaptedAt, keptDecibels: { kept }, threshold: gate,
                                      ownSpeech: OwnSpeech(saying(at: range.lowerBound)), wake: wake,
                                      meetsBaseThreshold: decoded.result.confidence >= decoder.threshold) == .ignored {
                return false
            }
            // Heard: it overlaps a person's event of its kind (a second of slack after it).
            func overlaps(_ event: Event) -> Bool {
                range.lowerBound < event.range.upperBound + 16_000 && range.upperBound > event.range.lowerBound
            }
            if let i = list.firstIndex(where: { $0.kind == kind && $0.heardAs == nil && overlaps($0) }) {
                list[i].heardAs = decoded.result.transcript
            } else if list.contains(where: overlaps) {
                // The person's words taken for the other kind, or heard twice:
                // not the device's own voice.
                misheard.append("\(kind): \(decoded.result.transcript)")
            } else if kind == "stop" {
                falseStops.append(decoded.result.transcript)
            } else {
                falseWakes.append(decoded.result.transcript)
            }
            return false
        }
        // The stages over the whole stream first (the same samples as
        // FrontEndSource hands out, FrontEndSourceTests), so each utterance's
        // microphone and cleaned audio can both be looked at.
        cleaned = try Self.cleaned(micSamples, recorded, echoSettings, frontEndSettings)
        var source = SampleArraySource(cleaned)
        try driver.run(&source, handler: DecoderUtterances(decoder), heard: heard)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        func count(_ kind: String) -> (heard: Int, total: Int) {
            let of = list.filter { $0.kind == kind }
            return (of.filter { $0.heardAs != nil }.count, of.count)
        }
        let stops = count("stop"), wakes = count("wake")
        let hours = Double(micSamples.count) / 16_000 / 3_600
        emit(String(format: "echo=%@%@ audio_hours=%.3f stops_heard=%d/%d wakes_heard=%d/%d false_stops=%d false_wakes=%d misheard=%d decode_seconds=%.0f",
                    echoSettings.description, cancelOnly ? " grammar=cancel-only" : "", hours, stops.heard, stops.total, wakes.heard, wakes.total,
                    falseStops.count, falseWakes.count, misheard.count, seconds))
        for text in falseStops.prefix(20) { emit("  false stop: \(text)") }
        for text in falseWakes.prefix(20) { emit("  false wake: \(text)") }
        for text in misheard.prefix(20) { emit("  misheard \(text)") }
    }

    /// The stream position at which the canceller has heard
    /// `EchoCanceller.adaptedFrames` frames of the device's voice.
    static func adaptedPosition(_ played: [Int16], offset: Int) -> Int64 {
        let frame = EchoCanceller.frameSamples
        var count = 0
        return played.withUnsafeBufferPointer { all in
            var start = 0
            while start + frame <= all.count {
                if EchoCanceller.isPlaying(UnsafeBufferPointer(rebasing: all[start..<start + frame])) { count += 1 }
                if count >= EchoCanceller.adaptedFrames { return Int64(start + frame + offset) }
                start += frame
            }
            return .max
        }
    }

    /// The microphone through the echo canceller and the front end, in one go.
    static func cleaned(_ micSamples: [Int16], _ recorded: RecordedReference, _ echo: EchoSettings,
                        _ frontEnd: FrontEndSettings) throws -> [Int16] {
        let frame = EchoCanceller.frameSamples
        var output = micSamples + [Int16](repeating: 0, count: (frame - micSamples.count % frame) % frame)
        if let canceller = try EchoCanceller(echo) {
            var referenceBlock = [Int16](repeating: 0, count: output.count)
            referenceBlock.withUnsafeMutableBufferPointer { recorded.read(from: 0, into: $0) }
            output.withUnsafeMutableBufferPointer { out in
                referenceBlock.withUnsafeBufferPointer { canceller.process(out, reference: $0) }
            }
        }
        if let stage = try FrontEnd(frontEnd) { output.withUnsafeMutableBufferPointer { stage.process($0) } }
        return Array(output[0..<micSamples.count])
    }

    /// The ERLE: microphone energy over the energy after the canceller,
    /// over the samples where the device was heard (reference above
    /// silence), after the filter's first `settle` seconds.
    private func printERLE(_ micSamples: [Int16], _ recorded: RecordedReference, _ settings: EchoSettings) throws {
        guard let canceller = try EchoCanceller(settings) else {
            emit("echo=off erle_db=0.0 (nothing cancels)")
            return
        }
        let frame = EchoCanceller.frameSamples
        var output = Array(micSamples[0..<(micSamples.count / frame * frame)])
        var referenceBlock = [Int16](repeating: 0, count: output.count)
        referenceBlock.withUnsafeMutableBufferPointer { recorded.read(from: 0, into: $0) }
        output.withUnsafeMutableBufferPointer { out in
            referenceBlock.withUnsafeBufferPointer { canceller.process(out, reference: $0) }
        }
        var before = 0.0, after = 0.0
        let start = Int(settle * 16_000) / frame
        for f in start..<(output.count / frame) {
            var playedEnergy = 0.0, micEnergy = 0.0, outEnergy = 0.0
            for i in f * frame..<(f + 1) * frame {
                playedEnergy += Double(referenceBlock[i]) * Double(referenceBlock[i])
                micEnergy += Double(micSamples[i]) * Double(micSamples[i])
                outEnergy += Double(output[i]) * Double(output[i])
            }
            // Frames the device spoke in (the reference above -50 dBFS RMS).
            guard playedEnergy / Double(frame) > 32_768 * 32_768 * 1e-5 else { continue }
            before += micEnergy
            after += outEnergy
        }
        emit(String(format: "echo=%@ erle_db=%.1f", settings.description, 10 * log10(before / max(after, 1))))
    }

    static let wake = WakeGrammar(name: "computer", direct: false, named: true, heyOptional: true)

    /// The barge-in grammar with the echo cancelled: cancel phrases, and the
    /// wake word before a command of the bundled apps or the coffee-maker
    /// benchmark's domain (which the person's recorded commands are from).
    static func bargeInModel() throws -> PhraseModel {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        var commands = PhraseCompiler.compile(registry)
        let coffee = try RhinoContext.load(sharedData("coffee-maker/grammar.yaml"), app: "Coffee Maker")
        commands.rules += coffee.rules
        commands.vocabularies.merge(coffee.vocabularies) { mine, _ in mine }
        return wake.bargeIn(commands: commands)
    }

    /// device-speech's TSV: first sample, end sample, text.
    static func readLines(_ path: String) throws -> [(start: Int64, text: String)] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").enumerated().map { index, line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let start = Int64(fields[0]), Int64(fields[1]) != nil
            else { throw ValidationError("\(path):\(index + 1): expected first sample, end sample, text; found '\(line)'") }
            return (start, fields[2])
        }
    }

    static func readEvents(_ path: String) throws -> [Event] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").enumerated().map { index, line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 3, ["stop", "wake"].contains(fields[0]), let start = Int64(fields[1]), let end = Int64(fields[2]), end > start
            else { throw ValidationError("\(path):\(index + 1): expected kind (stop|wake), first sample, end sample, label; found '\(line)'") }
            return Event(kind: fields[0], range: start..<end, label: fields.count > 3 ? fields[3] : "")
        }
    }
}
