#if canImport(Glibc)
import Glibc
#endif

/// Where Google's speech_embedding models are on this machine: the two
/// .tflite files of the `pyopen-wakeword` wheel on PyPI (1.1.0,
/// Apache-2.0), `melspectrogram.tflite` and `embedding_model.tflite`.
/// `scripts/setup.sh` installs them for development into
/// /usr/local/share/parley/speech-embedding, the .deb into
/// /usr/share/parley/model/speech-embedding, each with the licence.
/// Nothing is fetched at run time.
public enum SpeechEmbeddingAssets {
    public static let melName = "melspectrogram.tflite"
    public static let embeddingName = "embedding_model.tflite"

    /// `PARLEY_SPEECH_EMBEDDING_DIR` alone when set (tests, training); else
    /// the package's folder, then setup.sh's.
    public static var searchDirectories: [String] {
        if let custom = getenv("PARLEY_SPEECH_EMBEDDING_DIR").map({ String(cString: $0) }), !custom.isEmpty {
            return [custom]
        }
        return ["/usr/share/parley/model/speech-embedding", "/usr/local/share/parley/speech-embedding"]
    }

    /// The first folder holding both files.
    public static func locate(in directories: [String] = searchDirectories) throws(WakeModelError) -> String {
        for folder in directories
        where access(folder + "/" + melName, R_OK) == 0 && access(folder + "/" + embeddingName, R_OK) == 0 {
            return folder
        }
        throw .assetsMissing(searched: directories)
    }
}

/// The speech_embedding models' constants, read from the wheel's files.
///
/// The mel model is an STFT written as two convolutions (the window folded
/// into cosine and sine kernels, 512 samples every 160), power, a 257 x 32
/// mel matrix and 10 log10 with an 80 dB floor under each call's loudest
/// value. The embedding model is 20 convolutions (batch norm folded into
/// their biases), unpadded in time and "same" in frequency, leaky ReLU
/// (0.2) floored at -0.4 after each but the last, and a 2x max pool in
/// frequency after convolutions 3, 7, 11, 15 and 19, which also pools 2 in
/// time after 3, 11 and 19.
public struct SpeechEmbeddingWeights: Sendable {
    public struct Conv: Sendable {
        /// (out, kernelTime, kernelFreq, in), as TFLite stores them (OHWI).
        public var weights: [Float]
        public var bias: [Float]
        public var outputs: Int
        public var kernelTime: Int
        public var kernelFreq: Int
        public var inputs: Int
        /// The max pool after it: nil, or its stride in time (1 or 2); it always pools 2 in frequency.
        public var poolTime: Int?
    }

    public static let bins = 257
    public static let fft = 512
    public static let bands = 32
    public static let dims = 96

    /// The analysis window the model's DFT kernels (257 x 512 each, cosine
    /// and sine) carry: its cosine kernel for bin 0. The kernels are checked
    /// to be this window times the DFT's, with no bias, so the mel stage
    /// takes the power spectrum from an FFT (about 5% of the kernels'
    /// 263 k multiply-adds a frame).
    public let window: [Float]
    /// (257 x 32): power per bin to mel band.
    public let mel: [Float]
    public let convs: [Conv]

    private static let poolAfter: [Int: Int] = [2: 2, 6: 1, 10: 2, 14: 1, 18: 2]

    public init(folder: String) throws(WakeModelError) {
        let melFile = try TFLiteFile(path: folder + "/" + SpeechEmbeddingAssets.melName)
        window = try Self.dftWindow(
            real: try Self.checked(melFile, "convolution_1", [Self.bins, 1, Self.fft, 1]).values,
            imag: try Self.checked(melFile, "convolution1", [Self.bins, 1, Self.fft, 1]).values,
            bias: try Self.checked(melFile, "convolution", [Self.bins]).values, path: melFile.path)
        mel = try Self.checked(melFile, "Const_3", [Self.bins, Self.bands]).values

        let net = try TFLiteFile(path: folder + "/" + SpeechEmbeddingAssets.embeddingName)
        var convs: [Conv] = []
        var channels = 1
        for i in 0..<20 {
            let name = i == 0 ? "model/conv2d/Conv2D" : i == 19 ? "model/conv2d_19/Conv2D1" : "model/conv2d_\(i)/Conv2D"
            let w = try net.tensor(name, rank: 4)
            let bias = i == 19
                ? try net.tensor("model/conv2d_19/Conv2D", rank: 1)
                : try net.tensor(prefix: i == 0 ? "model/batch_normalization/FusedBatchNormV3" : "model/batch_normalization_\(i)/FusedBatchNormV3", rank: 1)
            let (o, kt, kf, c) = (w.shape[0], w.shape[1], w.shape[2], w.shape[3])
            guard c == channels, bias.values.count == o, kt == 1 || kt == 3, kf == 1 || kf == 3 else {
                throw .tensorShape(path: net.path, name: name, expected: "(out, 1|3, 1|3, \(channels)) with \(o) biases", found: w.shape)
            }
            convs.append(Conv(weights: w.values, bias: bias.values, outputs: o, kernelTime: kt, kernelFreq: kf,
                              inputs: c, poolTime: Self.poolAfter[i]))
            channels = o
        }
        guard channels == Self.dims else {
            throw .tensorShape(path: net.path, name: "model/conv2d_19/Conv2D1", expected: "\(Self.dims) outputs", found: [channels])
        }
        self.convs = convs
    }

    /// The window of a windowed-DFT pair of kernels, or an error saying how
    /// far they are from one (the sine kernels' sign is free: only the power
    /// is used).
    static func dftWindow(real: [Float], imag: [Float], bias: [Float], path: String) throws(WakeModelError) -> [Float] {
        // Which of the two is the cosine kernel is read from the weights:
        // the sine kernel of bin 0 is all zeros (the file names the first
        // tensor "convolution_1").
        let n = Self.fft
        let peak = { (kernel: [Float]) in kernel[0..<n].reduce(Float(0)) { max($0, abs($1)) } }
        let (cosine, sine) = peak(real) >= peak(imag) ? (real, imag) : (imag, real)
        let window = Array(cosine[0..<n])
        let scale = peak(cosine)
        var worst: Float = bias.reduce(Float(0)) { max($0, abs($1)) }
        // The n angles (k t mod n) 2 pi / n once: the check runs at every load.
        let cosines = (0..<n).map { cos(2 * Double.pi * Double($0) / Double(n)) }
        let sines = (0..<n).map { sin(2 * Double.pi * Double($0) / Double(n)) }
        for k in 0..<Self.bins {
            for t in 0..<n {
                let m = (k * t) % n, w = Double(window[t])
                worst = max(worst, Float(abs(Double(cosine[k * n + t]) - w * cosines[m])),
                            Float(abs(abs(Double(sine[k * n + t])) - abs(w * sines[m]))))
            }
        }
        guard scale > 0, worst <= 1e-4 * scale else {
            throw .corrupt(path: path, reason: "its DFT kernels are not a window times the DFT with no bias (off by \(worst), window peak \(scale))")
        }
        return window
    }

    private static func checked(_ file: TFLiteFile, _ name: String, _ shape: [Int]) throws(WakeModelError) -> TFLiteFile.Tensor {
        let t = try file.tensor(name)
        guard t.shape == shape else { throw .tensorShape(path: file.path, name: name, expected: "\(shape)", found: t.shape) }
        return t
    }
}
