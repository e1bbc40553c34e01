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
}
