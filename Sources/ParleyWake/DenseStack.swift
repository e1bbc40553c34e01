/// A small fully connected network: inputs standardised, dense layers with
/// ReLU between them, one logit out. The wake heads and the keyword
/// network (ParleySpeech's `KeywordSpotter`) both score windows with it.
/// Scratch space is made once: no allocation per window.
public final class DenseStack {
    public struct Layer: Sendable, Decodable {
        /// Row-major, one row of `inputs` weights per output.
        public var weights: [Float]
        public var bias: [Float]
        public var inputs: Int { bias.isEmpty ? 0 : weights.count / bias.count }

        enum CodingKeys: String, CodingKey { case weights, bias }

        public init(weights: [Float], bias: [Float]) {
            self.weights = weights
            self.bias = bias
        }

        /// `weights` as a list of rows (out × in), as the training scripts write them.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let rows = try c.decode([[Float]].self, forKey: .weights)
            bias = try c.decode([Float].self, forKey: .bias)
            guard rows.count == bias.count, let width = rows.first?.count, rows.allSatisfy({ $0.count == width }) else {
                throw DecodingError.dataCorruptedError(forKey: .weights, in: c,
                    debugDescription: "expected \(bias.count) rows of equal length (one per bias)")
            }
            weights = rows.flatMap { $0 }
        }
    }

    private let mean: [Float]
    private let scale: [Float]
    private let layers: [Layer]
    private var scratch: [[Float]]

    /// Checks that the layers chain (each one's inputs the last one's
    /// outputs, one logit at the end); `why` says what does not.
    public static func check(mean: [Float], scale: [Float], layers: [Layer]) -> String? {
        guard mean.count == scale.count, !mean.isEmpty else { return "mean and scale must have the same, non-zero length" }
        var width = mean.count
        for (i, l) in layers.enumerated() {
            guard l.inputs == width else { return "layer \(i + 1) takes \(l.inputs) inputs, expected \(width)" }
            width = l.bias.count
        }
        return width == 1 ? nil : "the last layer has \(width) outputs, expected 1"
    }

    public init(mean: [Float], scale: [Float], layers: [Layer]) {
        self.mean = mean
        self.scale = scale
        self.layers = layers
        scratch = [Array(repeating: 0, count: mean.count)] + layers.map { Array(repeating: 0, count: $0.bias.count) }
    }

    public var inputCount: Int { mean.count }

    public func logit(_ input: UnsafeBufferPointer<Float>) -> Float {
        scratch[0].withUnsafeMutableBufferPointer { x in
            for i in 0..<x.count { x[i] = (input[i] - mean[i]) * scale[i] }
        }
        for l in 0..<layers.count {
            let layer = layers[l]
            let last = l == layers.count - 1
            let inputs = layer.inputs
            scratch[l].withUnsafeBufferPointer { x in
                scratch[l + 1].withUnsafeMutableBufferPointer { y in
                    layer.weights.withUnsafeBufferPointer { w in
                        for o in 0..<y.count {
                            let sum = dot(w.baseAddress! + o * inputs, x.baseAddress!, inputs) + layer.bias[o]
                            y[o] = last ? sum : max(0, sum)
                        }
                    }
                }
            }
        }
        return scratch[layers.count][0]
    }
}

/// Eight lanes at a time (a plain loop is not vectorised: float sums may
/// not be reordered), the rest one by one.
@inline(__always)
public func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
    var lanes = SIMD8<Float>()
    var i = 0
    while i + 8 <= count {
        lanes += UnsafeRawPointer(a + i).loadUnaligned(as: SIMD8<Float>.self)
            * UnsafeRawPointer(b + i).loadUnaligned(as: SIMD8<Float>.self)
        i += 8
    }
    var sum = lanes.sum()
    while i < count {
        sum += a[i] * b[i]
        i += 1
    }
    return sum
}
