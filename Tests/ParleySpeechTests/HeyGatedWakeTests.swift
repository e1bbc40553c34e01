import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
@testable import ParleySpeech
import ParleyWake
import Testing

/// Direct mode's hey gate (`wake.hey_gate`): the shipped "hey" head
/// (model/wake/hey.embedding.json) opens it on "hey, <command>" and not on
/// talk without it; the name's detector it wraps decides the name as before.
@Suite struct HeyGatedWakeTests {
    static func head(_ name: String) throws -> EmbeddingSpotter {
        let path = Fixtures.packageRoot.appendingPathComponent(KeywordModel.sourceWakeFolder + "/\(name).embedding.json").path
        return EmbeddingSpotter(model: try EmbeddingWakeModel.load(path),
                                weights: try SpeechEmbeddingWeights(folder: try SpeechEmbeddingAssets.locate()))
    }

    /// Two seconds of the room (the listener's lead-in), then `samples` in capture-sized blocks, then a second more.
    static func utterance(_ wake: any WakeDecoding, _ samples: [Int16]) {
        let quiet = EmbeddingSpotter.padded([])
        wake.begin()
        wake.feed(Array(quiet.prefix(16_000)) + Array(quiet.suffix(16_000)))
        for at in stride(from: 0, to: samples.count, by: 480) { wake.feed(Array(samples[at..<min(samples.count, at + 480)])) }
        wake.feed(Array(quiet.prefix(16_000)))
    }

    @Test func heyOpensTheGateAndTalkWithoutItDoesNot() throws {
        let synth = try SpeechSynthesizer()
        let gate = HeyGatedWake(name: nil, hey: try Self.head("hey"))
        #expect(gate.gatesDirectCommands && !gate.unproposedMayBeCommands && gate.leadInSamples == 32_000)
        #expect(gate.unopenedAtEnd == .decodedWhenShort, "a missed hey costs a late answer, not the command")
        var opened = 0
        for command in ["hey, coffee time", "hey, order soup with soup chef", "hey, what time is it"] {
            Self.utterance(gate, try synth.render16k(command).asCaptured().samples)
            if gate.opensGate { opened += 1 }
            #expect(!gate.finish() && !gate.proposed, "\"hey\" opens the gate, it never wakes the device")
        }
        #expect(opened >= 2, "opened on \(opened) of 3")
        var talk = 0
        for line in ["the weather today is sunny with a light breeze", "I would like a large latte please", "they left the station at seven"] {
            Self.utterance(gate, try synth.render16k(line).asCaptured().samples)
            // The gate's line is deliberately permissive (a false open costs
            // a decode, a missed "hey" a command): the head's own threshold
            // is what separates talk from "hey".
            if gate.hey.peak >= gate.hey.threshold { talk += 1 }
        }
        #expect(talk == 0, "\(talk) of 3 lines without hey reached the head's threshold")
        Self.utterance(gate, Array(try PCMAudio.read(Fixtures.kitchenNoise).samples.prefix(8 * 16_000)))
        #expect(!gate.opensGate)
    }

    @Test func theNamesDetectorStillDecidesTheName() throws {
        let name = EmbeddingWakeUtterance(try Self.head("computer"))
        let gate = HeyGatedWake(name: name, hey: try Self.head("hey"))
        Self.utterance(gate, try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples)
        #expect(gate.proposed && gate.opensGate && gate.finish())
        #expect(gate.wakeEndSample == name.wakeEndSample && gate.wakeEndSample != nil)
        #expect(gate.samplesFed == name.samplesFed)
    }

    /// A television talks for seconds on end: the head listens for "hey"
    /// only in the first 2 s of an utterance's speech (a command starts with
    /// it), so a long utterance costs what a 2 s one does, and a "hey" said
    /// 3 s into one opens nothing. Kitchen noise stands in for the talk
    /// before it, as it opens nothing by itself.
    @Test func theHeadListensOnlyAtTheStartOfTheSpeech() throws {
        let kitchen = Array(try PCMAudio.read(Fixtures.kitchenNoise).samples.prefix(6 * 16_000))
        let hey = try SpeechSynthesizer().render16k("hey, coffee time").asCaptured().samples
        let gate = HeyGatedWake(name: nil, hey: try Self.head("hey"))
        Self.utterance(gate, hey)
        #expect(gate.opensGate, "hey at the start opens the gate (peak \(gate.hey.peak))")
        Self.utterance(gate, Array(kitchen.prefix(3 * 16_000)) + hey)
        #expect(!gate.opensGate, "a hey 3 s into the speech opened the gate (peak \(gate.hey.peak))")
        let late = gate.hey.embeddings
        Self.utterance(gate, kitchen)
        #expect(!gate.opensGate)
        #expect(gate.hey.embeddings == late, "6 s of speech embedded as much as 3 s and a hey")
        // The lead-in and 2 s of speech, and nothing after.
        let listened = try Self.head("hey")
        (Array(EmbeddingSpotter.padded([]).prefix(32_000)) + kitchen.prefix(2 * 16_000)).withUnsafeBufferPointer { listened.feed($0) { _, _ in } }
        #expect(gate.hey.embeddings == listened.embeddings)
    }

    /// A television's utterances come a fraction of a second apart, inside
    /// the next one's 2 s lead-in: the hey head's stream is taken up, so no
    /// audio is embedded twice, and "hey" after the first still opens the
    /// gate, as on a stream begun anew. A lead-in that starts after the
    /// stream's end begins anew. (The first utterance is kitchen noise: a
    /// gate opened by it would stop feeding the head.)
    @Test func theNextUtteranceTakesUpTheHeyStreamWhereItOverlaps() throws {
        let quiet = Array(EmbeddingSpotter.padded([]).prefix(16_000))
        let kitchen = Array(try PCMAudio.read(Fixtures.kitchenNoise).samples.prefix(6 * 16_000))
        let pause = Array(quiet.prefix(4_800))
        let hey = try SpeechSynthesizer().render16k("hey, coffee time").asCaptured().samples
        func embeddings(_ samples: ArraySlice<Int16>) throws -> Int {
            let spotter = try Self.head("hey")
            Array(samples).withUnsafeBufferPointer { spotter.feed($0) { _, _ in } }
            return spotter.embeddings
        }
        /// Two utterances, the second's lead-in over the first's end; the gate after each.
        func twoUtterances(_ second: [Int16]) throws -> (gate: HeyGatedWake, stream: [Int16], from: Int, firstOpened: Bool) {
            let stream = quiet + quiet + Array(kitchen.prefix(3 * 16_000)) + pause + second + quiet
            let secondSpeech = 2 * quiet.count + 3 * 16_000 + pause.count
            let gate = HeyGatedWake(name: nil, hey: try Self.head("hey"))
            func feed(_ range: Range<Int>) {
                for at in stride(from: range.lowerBound, to: range.upperBound, by: 480) {
                    gate.feed(Array(stream[at..<min(range.upperBound, at + 480)]))
                }
            }
            gate.begin(at: 0)
            feed(0..<(secondSpeech - pause.count + 1_600))
            let firstOpened = gate.opensGate
            let from = secondSpeech - gate.leadInSamples
            gate.begin(at: Int64(from))
            #expect(gate.hey.peak == -.infinity, "the first utterance's scores are forgotten")
            feed(from..<stream.count)
            return (gate, stream, from, firstOpened)
        }

        let noise = try twoUtterances(Array(kitchen.suffix(3 * 16_000)))
        #expect(!noise.firstOpened && !noise.gate.opensGate, "kitchen noise opened the gate")
        // The second utterance's speech is 3 s of noise: heard for its first 2 s.
        let heard = noise.stream[..<(noise.from + noise.gate.leadInSamples + HeyGatedWake.heyListenSamples)]
        #expect(noise.gate.hey.embeddings == (try embeddings(heard)), "nothing embedded twice, nor after 2 s of speech")
        #expect(noise.gate.hey.embeddings < (try embeddings(noise.stream[..<(noise.from + 2 * 16_000)]))
                    + (try embeddings(heard[noise.from...])), "begun anew, the lead-in is embedded again")

        let spoken = try twoUtterances(hey)
        #expect(!spoken.firstOpened && spoken.gate.opensGate, "hey after the noise did not open the gate (peak \(spoken.gate.hey.peak))")
        let anew = HeyGatedWake(name: nil, hey: try Self.head("hey"))
        anew.begin()
        for at in stride(from: spoken.from, to: spoken.stream.count, by: 480) {
            anew.feed(Array(spoken.stream[at..<min(spoken.stream.count, at + 480)]))
        }
        #expect(anew.opensGate, "on a stream begun anew it opens too")

        // A lead-in after the stream's end: begun anew.
        spoken.gate.begin(at: Int64(spoken.stream.count) + 16_000)
        #expect(spoken.gate.hey.embeddings == 0)
    }
}
