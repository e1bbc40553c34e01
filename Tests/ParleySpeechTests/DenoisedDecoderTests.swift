import Foundation
import ParleyAudio
import ParleyCore
import ParleyDenoise
import ParleyTestKit
import Testing

@testable import ParleySpeech

/// A command decoder that only records what it was fed and answers with
/// evidence measured on it, as the real one does.
private final class MeasuringDecoder: ScriptedDecoder<CommandResult>, CommandDecoding {
    init() {
        super.init(otherwise: .init(.incomplete, CommandResult(transcript: "", confidence: 0, match: nil)))
    }

    private func measured(_ samples: [Int16]) -> CommandResult {
        CommandResult(transcript: "a large latte", confidence: 0, match: nil,
                      evidence: RejectionEvidence(ratio: 0, absorbedSpeech: 0, snr: RejectionPolicy.estimatedSNR(samples), threshold: -1))
    }

    override func finish() throws -> CommandResult {
        _ = try super.finish()
        return measured(utterances.last?.fed ?? [])
    }

    func update(model: PhraseModel, graph: WordGraph) throws {}
    func recognize(_ samples: [Int16]) throws -> CommandResult { measured(samples) }
}

/// `DenoisedCommandDecoder` (issue 49) through the real DeepFilterNet
/// runtime (scripts/setup.sh installs it): the result carries the SNR of
/// the room, measured before the network, beside the decoder's own of the
/// denoised audio. One at a time, as NeuralDenoiserTests (the network runs
/// flat out).
@Suite(.serialized) struct DenoisedDecoderTests {
    static func kitchenOrder(snr: Double) throws -> [Int16] {
        let speech = try WAVFile.read(Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav")).samples
        let noise = try WAVFile.read(Fixtures.require(Fixtures.kitchenNoise)).samples
        return NoiseMixer.mix(speech: speech, noise: noise, snrDB: snr, seed: 1)
    }

    @Test func theResultCarriesTheSNRBeforeTheNetwork() throws {
        let input = try Self.kitchenOrder(snr: 6)
        let base = MeasuringDecoder()
        let decoder = DenoisedCommandDecoder(base, denoiser: try NeuralDenoiser(settings: .neural))
        decoder.begin()
        var offset = 0
        while offset < input.count {
            decoder.feed(Array(input[offset..<min(input.count, offset + 1_600)]))
            offset += 1_600
        }
        let result = try decoder.finish()
        let evidence = try #require(result.evidence)
        let room = RejectionPolicy.estimatedSNR(input)
        #expect(evidence.inputSNR == room)
        // What the decoder heard reads far quieter than the room was: the
        // reason the ask rule's bands split on the room's SNR.
        #expect(room < 20, "kitchen noise at 6 dB: \(room)")
        #expect(evidence.snr > room + 10, "denoised \(evidence.snr) dB against the room's \(room) dB")
        // A buffered decode (the grammar changed meanwhile) carries it too.
        #expect(try decoder.recognize(input).evidence?.inputSNR == room)
    }
}
