import Foundation
import ParleyCore
import ParleyWake

/// A keyword network as training/parley_training/kws.py writes it (`kws.py train`): the
/// word, its detection threshold (set on negatives it never trained on), the
/// feature settings and one or more networks whose logits are averaged.
/// The file is JSON: `{"word", "threshold", "calibration_hours", "members":
/// [{"features": {...}, "input_mean", "input_scale", "layers": [{"weights"
/// (out × in), "bias"}]}]}`.
public struct KeywordModel: Sendable, Decodable {
    public struct Features: Sendable, Decodable, Equatable {
        public struct PCEN: Sendable, Decodable, Equatable {
            public var s: Double
            public var alpha: Double
            public var delta: Double
            public var r: Double
        }

        public var rate: Int
        public var frame: Int
        public var hop: Int
        public var fft: Int
        public var bands: Int
        public var lowHz: Double
        public var highHz: Double
        public var pool: Int
        public var window: Int
        public var kind: String
        public var pcen: PCEN
        public var windowMeanRemoved: Bool
        public var smooth: Int

        enum CodingKeys: String, CodingKey {
            case rate, frame, hop, fft, bands, pool, window, kind, pcen, smooth
            case lowHz = "low_hz", highHz = "high_hz", windowMeanRemoved = "window_mean_removed"
        }
    }

    /// A dense layer (ParleyWake's, shared with the wake heads).
    public typealias Layer = DenseStack.Layer

    public struct Network: Sendable, Decodable {
        public var features: Features
        public var inputMean: [Float]
        public var inputScale: [Float]
        public var layers: [Layer]

        enum CodingKeys: String, CodingKey {
            case features, layers
            case inputMean = "input_mean", inputScale = "input_scale"
        }
    }

    public var word: String
    /// Scores (mean logit of the last `smooth` windows) at or above this are
    /// the word, at sensitivity 0.5.
    public var threshold: Double
    public var members: [Network]

    /// The features every member was trained on.
    public var features: Features { members[0].features }

    /// Reads and checks a model file; errors name the file and what is wrong.
    public static func load(_ path: String) throws -> KeywordModel {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw SpeechError.badSetting(name: "keyword model", value: path, expected: "a readable file (\(error.localizedDescription))")
        }
        let model: KeywordModel
        do { model = try JSONDecoder().decode(KeywordModel.self, from: data) } catch {
            throw SpeechError.badSetting(name: "keyword model", value: path, expected: "training/parley_training/kws.py's JSON (\(error))")
        }
        if let problem = model.problem {
            throw SpeechError.badSetting(name: "keyword model", value: path, expected: problem)
        }
        return model
    }

    /// What makes the model unusable by `KeywordFeatures`/`KeywordSpotter`, if anything.
    var problem: String? {
        guard let first = members.first else { return "at least one network in members" }
        let f = first.features
        guard members.allSatisfy({ $0.features == f }) else { return "the same features for every network" }
        guard f.rate == PCMAudio.sampleRate else { return "features at \(PCMAudio.sampleRate) Hz, not \(f.rate)" }
        guard f.kind == "pcen", f.windowMeanRemoved else { return "PCEN features with the window mean removed, not \(f.kind)" }
        guard f.fft > 0, f.fft & (f.fft - 1) == 0, f.frame <= f.fft, f.frame > f.hop, f.hop > 0 else {
            return "a power-of-two FFT at least a frame long, and a hop shorter than the frame"
        }
        guard f.bands > 0, f.pool > 0, f.window > 0, f.smooth > 0, f.lowHz < f.highHz, f.highHz <= Double(f.rate) / 2 else {
            return "positive bands, pool, window and smooth, and a band range under half the rate"
        }
        let inputs = f.bands * f.window
        for (i, member) in members.enumerated() {
            guard member.inputMean.count == inputs, member.inputScale.count == inputs else {
                return "network \(i): input_mean and input_scale of \(inputs) values (bands × window)"
            }
            var width = inputs
            for (j, layer) in member.layers.enumerated() {
                guard layer.inputs == width, !layer.bias.isEmpty else {
                    return "network \(i) layer \(j): \(width) inputs per row"
                }
                width = layer.bias.count
            }
            guard width == 1 else { return "network \(i): one output (a logit)" }
        }
        return nil
    }
}

extension KeywordModel {
    /// Where the package installs the wake names' networks (`<name>.json`).
    public static let installedWakeFolder = "/usr/share/parley/model/wake"
    /// Where a checkout holds them (trained by training/bin/train-wake-kws.sh).
    public static let sourceWakeFolder = "model/wake"

    /// The network for a wake name ("computer": computer.json, words joined
    /// by "-"): the installed one, else the source tree's the executable was
    /// built in, else the current directory's; nil when there is none.
    public static func wakeModelPath(name: String) -> String? {
        wakeFilePath(name: name, suffix: ".json")
    }

    /// The speech_embedding head for a wake name (`<name>.embedding.json`,
    /// training/parley_training: `parley wake train`), found as `wakeModelPath`.
    public static func wakeHeadPath(name: String) -> String? {
        wakeFilePath(name: name, suffix: ".embedding.json")
    }

    /// Where `parley wake train NAME` puts the heads it makes: found before
    /// the package's, so a person's own head needs no new package.
    public static let trainedWakeFolder = "/var/lib/parley/wake"

    static func wakeFilePath(name: String, suffix: String) -> String? {
        let file = name.lowercased().split(separator: " ").joined(separator: "-") + suffix
        let trained = trainedWakeFolder + "/" + file
        if FileManager.default.fileExists(atPath: trained) { return trained }
        let installed = installedWakeFolder + "/" + file
        if FileManager.default.fileExists(atPath: installed) { return installed }
        let relative = sourceWakeFolder + "/" + file
        if let root = SourceTree.root(holding: relative) { return root.appendingPathComponent(relative).path }
        return FileManager.default.fileExists(atPath: relative) ? relative : nil
    }
}
