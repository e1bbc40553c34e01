import Foundation
import ParleyAudio
import ParleyCore
import ParleyTestKit
@testable import ParleySpeech
import ParleyWake
import Testing

/// Named mode's embedding behind the name's keyword network
/// (`EmbeddingWakeUtterance` with a first stage): a word that sounds a
/// little like the name wakes the embedding, and 3 s after the network last
/// came near its line the embedding sleeps again (a television's utterance
/// runs on for 10-15 s); a name said later in the same utterance wakes it
/// once more and is heard whole from the replay.
@Suite struct EmbeddingWakeSleepTests {
    static func named() throws -> EmbeddingWakeUtterance {
        let root = Fixtures.packageRoot.appendingPathComponent(KeywordModel.sourceWakeFolder).path
        return try EmbeddingWakeUtterance.load(head: root + "/computer.embedding.json", networkPath: root + "/computer.json", sensitivity: 0.5)
    }

    static func feed(_ wake: EmbeddingWakeUtterance, _ samples: [Int16]) {
        for at in stride(from: 0, to: samples.count, by: 480) { wake.feed(Array(samples[at..<min(samples.count, at + 480)])) }
    }

    @Test func theEmbeddingSleepsAgainAndTheNameWakesIt() throws {
        let quiet = Array(EmbeddingSpotter.padded([]).prefix(16_000))
        let computer = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        let synth = try SpeechSynthesizer()
        var slept = 0
        // Words the network wakes the embedding on (espeak-ng's voice: within
        // 10 logits of its line) that the embedding does not propose.
        for line in ["cucumber", "put her", "competition"] {
            let wake = try Self.named()
            wake.begin()
            Self.feed(wake, quiet + quiet)
            #expect(!wake.embeddingAwake && wake.spotter.embeddings == 0, "the room alone wakes nothing")
            Self.feed(wake, try synth.render16k(line).asCaptured().samples)
            guard wake.embeddingAwake || wake.spotter.embeddings > 0 else { continue }
            // Far from both lines for 3 s: asleep, nothing embedded after.
            Self.feed(wake, quiet + quiet + quiet + quiet)
            #expect(!wake.embeddingAwake && !wake.proposed, "\"\(line)\": still awake, peak \(wake.peak) against \(wake.spotter.threshold)")
            let asleep = wake.spotter.embeddings, peak = wake.peak
            Self.feed(wake, quiet + quiet)
            #expect(wake.spotter.embeddings == asleep, "\"\(line)\": embedded while asleep")
            #expect(peak.isFinite && wake.peak == peak, "the first stream's peak is kept")
            // The name, 6 s into the utterance.
            let before = wake.samplesFed
            Self.feed(wake, computer + quiet)
            #expect(wake.finish() && wake.proposed, "\"\(line)\", then the name: not woken")
            let end = try #require(wake.wakeEndSample)
            #expect(end > before && end <= before + Int64(computer.count) + 16_000, "the name ends within its recording or the second after")
            slept += 1
        }
        #expect(slept >= 2, "the network woke the embedding on \(slept) of 3 words")
    }

    /// A name said once keeps the embedding awake to the utterance's end:
    /// the command decoders are open, and the name's end is known.
    @Test func aProposedNameKeepsItAwake() throws {
        let quiet = Array(EmbeddingSpotter.padded([]).prefix(16_000))
        let computer = try PCMAudio.read(try Fixtures.wavFiles(in: Fixtures.wakeComputer).first!).samples
        let wake = try Self.named()
        wake.begin()
        Self.feed(wake, quiet + quiet + computer + quiet + quiet + quiet + quiet + quiet)
        #expect(wake.finish() && wake.embeddingAwake)
    }
}
