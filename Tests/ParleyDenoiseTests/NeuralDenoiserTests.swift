import Foundation
import ParleyAudio
import ParleyDevice
import ParleyTestKit
import Testing

@testable import ParleyDenoise

/// The neural noise suppressor through the real DeepFilterNet runtime
/// (installed by scripts/setup.sh): alignment, what it does to noise and to
/// speech, state across utterances, and each way it can fail to start.
/// One at a time: each runs the network flat out, and beside the rest of
/// the suite's daemons on 2 cores eight at once would starve them.
@Suite(.serialized) struct NeuralDenoiserTests {
    static let settings = FrontEndSettings.neural

    /// A 16 kHz chirp burst (no period, so a correlation has one peak).
    static func chirp(at start: Int, length: Int, total: Int) -> [Int16] {
        var samples = [Int16](repeating: 0, count: total)
        for i in 0..<length {
            let t = Double(i) / 16_000
            let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(length - 1))
            samples[start + i] = Int16(9_000 * window * sin(2 * Double.pi * (150 * t + 2_500 * t * t)))
        }
        return samples
    }

    /// The lag (within ±`range`) at which `output` best matches `input`.
    static func bestLag(_ input: [Int16], _ output: [Int16], range: Int = 800) -> Int {
        var best = (lag: 0, score: -Double.infinity)
        for lag in -range...range {
            var score = 0.0
            for i in 0..<input.count where i + lag >= 0 && i + lag < output.count {
                score += Double(input[i]) * Double(output[i + lag])
            }
            if score > best.score { best = (lag, score) }
        }
        return best.lag
    }

    static func energy(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))
    }

    @Test func outputIsAlignedWithTheInputAndAsLong() throws {
        let denoiser = try NeuralDenoiser(settings: Self.settings)
        let input = Self.chirp(at: 8_000, length: 4_000, total: 24_000)
        // Fed in uneven pieces, as the listening driver's blocks come.
        denoiser.begin()
        var output: [Int16] = []
        var offset = 0
        for piece in [37, 480, 1_600, 333, 160, 5_000] where offset < input.count {
            let end = min(input.count, offset + piece)
            output += denoiser.process(Array(input[offset..<end]))
            offset = end
        }
        output += denoiser.process(Array(input[offset...]))
        output += denoiser.finish()
        #expect(output.count == input.count)
        #expect(abs(Self.bestLag(input, output)) <= 1)
        // It came through (a chirp is not all noise to the network).
        #expect(Self.energy(output[8_000..<12_000]) > 0.05 * Self.energy(input[8_000..<12_000]))
    }

    @Test func eachUtteranceGivesItsOwnSamplesOnOneState() throws {
        let denoiser = try NeuralDenoiser(settings: Self.settings)
        let first = Self.chirp(at: 2_000, length: 3_000, total: 9_000)
        let second = Self.chirp(at: 4_000, length: 3_000, total: 12_000)
        let a = denoiser.denoise(first)
        // An utterance dropped half-way (cancelled) leaves nothing behind.
        denoiser.begin()
        _ = denoiser.process(Array(second[0..<5_000]))
        let b = denoiser.denoise(second)
        #expect(a.count == first.count && b.count == second.count)
        #expect(abs(Self.bestLag(second, b)) <= 1)
    }

    @Test func kitchenNoiseIsSuppressedAndSpeechKept() throws {
        let speech = try WAVFile.read(Fixtures.coffeeRecording("0075d273-51bb-47cb-b323-4437bd0de029.wav")).samples
        let noise = try WAVFile.read(Fixtures.require(Fixtures.kitchenNoise)).samples
        // 1 s of the noise alone before the speech, then the two at 6 dB.
        let lead = Array(noise[0..<16_000])
        let mixed = NoiseMixer.mix(speech: speech, noise: Array(noise[16_000...]), snrDB: 6, seed: 1)
        let input = lead.map { Int16(Double($0) * 0.5) } + mixed
        let output = try NeuralDenoiser(settings: Self.settings).denoise(input)
        #expect(output.count == input.count)
        // The noise alone (after the network's first 300 ms) is down by more than 10 dB.
        let noiseIn = Self.energy(input[4_800..<16_000]), noiseOut = Self.energy(output[4_800..<16_000])
        #expect(noiseOut < noiseIn / 10)
        // The speech is not: the loudest second loses less than 6 dB.
        let speechIn = NoiseMixer.peakFrameEnergy(input[16_000...]), speechOut = NoiseMixer.peakFrameEnergy(output[16_000...])
        #expect(speechOut > speechIn / 4)
    }

    @Test func attenuationLimitBoundsTheSuppression() throws {
        let noise = try WAVFile.read(Fixtures.require(Fixtures.kitchenNoise)).samples
        let input = Array(noise[0..<32_000])
        let limited = try NeuralDenoiser(settings: FrontEndSettings(parsing: "neural:-6")).denoise(input)
        let free = try NeuralDenoiser(settings: Self.settings).denoise(input)
        let e = Self.energy(input[8_000...]), el = Self.energy(limited[8_000...]), ef = Self.energy(free[8_000...])
        // At most 6 dB (a factor of 4 in energy) off with the limit, much more without.
        #expect(el > e / 5)
        #expect(ef < el / 4)
    }

    // MARK: Faults: each one a clear error, never a crash

    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("denoise-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aMissingLibraryNamesWhereItLooked() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: NeuralFrontEndError.libraryMissing(searched: [folder.path])) {
            try DeepFilterAssets.locate(in: [folder.path])
        }
        let message = NeuralFrontEndError.libraryMissing(searched: [folder.path]).description
        #expect(message.contains(folder.path) && message.contains("libdeepfilter.so"))
    }

    @Test func aLibraryThatIsNotOneIsRefused() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let library = folder.appendingPathComponent(DeepFilterAssets.libraryName)
        try Data("not an ELF file".utf8).write(to: library)
        let assets = DeepFilterAssets(library: library.path, model: folder.appendingPathComponent("m").path)
        do {
            _ = try NeuralDenoiser(settings: Self.settings, assets: assets)
            Issue.record("a text file loaded as the runtime")
        } catch {
            guard case .libraryUnloadable(let path, _) = error else { Issue.record("\(error)"); return }
            #expect(path == library.path)
        }
    }

    @Test func aCorruptTruncatedOrMissingModelIsRefusedBeforeTheRuntimeSeesIt() throws {
        let installed = try DeepFilterAssets.locate()
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try Data(contentsOf: URL(fileURLWithPath: installed.model))
        let truncated = folder.appendingPathComponent("truncated.tar.gz")
        try model.prefix(100_000).write(to: truncated)
        var flipped = model
        flipped[model.count / 2] ^= 0xff
        let corrupt = folder.appendingPathComponent("corrupt.tar.gz")
        try flipped.write(to: corrupt)
        for path in [truncated.path, corrupt.path] {
            let assets = DeepFilterAssets(library: installed.library, model: path)
            do {
                _ = try NeuralDenoiser(settings: Self.settings, assets: assets)
                Issue.record("\(path) was handed to the runtime")
            } catch {
                guard case .modelChecksum(let named, let found) = error else { Issue.record("\(error)"); continue }
                #expect(named == path && found != DeepFilterAssets.modelSHA256)
                #expect(error.description.contains(DeepFilterAssets.modelSHA256))
            }
        }
        let missing = DeepFilterAssets(library: installed.library, model: folder.appendingPathComponent("none.tar.gz").path)
        #expect(throws: NeuralFrontEndError.modelMissing(path: missing.model)) {
            try NeuralDenoiser(settings: Self.settings, assets: missing)
        }
    }

    @Test func theStreamingHashMatchesTheStandardVectorsInAnyPieces() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        let expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        #expect(SHA256.hexString(SHA256.digest(message)) == expected)
        for split in [1, 7, 55, 56, 63, 64, 65] {
            var hash = SHA256()
            message.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + split)
                    hash.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                    offset = end
                }
            }
            #expect(SHA256.hexString(hash.finish()) == expected)
        }
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hexString(SHA256.digest(million)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
