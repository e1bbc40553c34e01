import Foundation

/// A streaming rational resampler (polyphase FIR, Kaiser-windowed sinc):
/// output rate = input rate × L / M. The prototype low-pass sits at half the
/// lower of the two rates with a transition band of ±1/16 of that rate and
/// 60 dB stop-band attenuation, so 48 kHz → 16 kHz passes 0–7 kHz flat and
/// removes everything above 9 kHz before decimation (no aliasing into speech).
///
/// All buffers are allocated in `init`; `process` allocates nothing. Not
/// thread-safe: one instance per stream.
public final class PolyphaseResampler {
    public let inputRate: Int
    public let outputRate: Int
    /// Interpolation (L) and decimation (M) factors.
    public let up: Int
    public let down: Int
    /// Taps per polyphase branch, padded to a multiple of 8 for SIMD.
    public let tapsPerPhase: Int
    /// Largest input block `process` accepts.
    public let maxInput: Int
    /// Delay of the filter, in output samples (a whole number by design).
    public let delayOutputSamples: Int

    /// coefficients[p * T + j] = h[p + (T - 1 - j) * L]: branch p, reversed so
    /// the dot product walks input and coefficients forward together.
    private let coefficients: UnsafeMutablePointer<Float>
    /// T - 1 samples of history followed by up to `maxInput` new samples.
    private let history: UnsafeMutablePointer<Float>
    private var index: Int      // input index (in `history`) of the next output's newest sample
    private var phase: Int      // polyphase branch of the next output

    public init(inputRate: Int, outputRate: Int, maxInput: Int, attenuationDB: Double = 60) {
        precondition(inputRate > 0 && outputRate > 0 && maxInput > 0)
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(inputRate, outputRate)
        self.inputRate = inputRate
        self.outputRate = outputRate
        up = outputRate / g
        down = inputRate / g
        self.maxInput = maxInput

        // Kaiser design at the up-sampled rate L·fin.
        let lower = Double(min(inputRate, outputRate))
        let fs = Double(inputRate) * Double(up)
        let cutoff = 0.5 * lower / fs                          // cycles per sample
        let transition = 0.125 * lower / fs
        let beta = attenuationDB > 50 ? 0.1102 * (attenuationDB - 8.7)
            : 0.5842 * pow(attenuationDB - 21, 0.4) + 0.07886 * (attenuationDB - 21)
        var length = Int(((attenuationDB - 7.95) / (2.285 * 2 * Double.pi * transition)).rounded(.up)) + 1
        var taps = (length + up - 1) / up
        taps = (taps + 7) / 8 * 8
        length = taps * up
        tapsPerPhase = taps

        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0, k = 1.0
            while term > 1e-12 * sum {
                term *= (x / (2 * k)) * (x / (2 * k))
                sum += term
                k += 1
            }
            return sum
        }
        // Centre the (symmetric, linear-phase) prototype on a multiple of M so
        // the delay is a whole number of output samples; taps past 2·centre are zero.
        let centerIndex = down * ((length - 1) / 2 / down)
        delayOutputSamples = centerIndex / down
        let center = Double(centerIndex)
        let i0Beta = besselI0(beta)
        coefficients = .allocate(capacity: length)
        for n in 0..<length {
            let t = Double(n) - center
            var h = 0.0
            if n <= 2 * centerIndex {
                let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
                let r = center > 0 ? t / center : 0
                let window = besselI0(beta * max(0, 1 - r * r).squareRoot()) / i0Beta
                h = sinc * window * Double(up)                 // gain L restores level after zero-stuffing
            }
            let p = n % up, k = n / up
            coefficients[p * taps + (taps - 1 - k)] = Float(h)
        }
        history = .allocate(capacity: taps - 1 + maxInput)
        history.initialize(repeating: 0, count: taps - 1 + maxInput)
        index = taps - 1
        phase = 0
    }

    deinit {
        coefficients.deallocate()
        history.deallocate()
    }

    /// Where `process` expects the next input samples: write up to `maxInput`
    /// floats here, then call `process(count:output:)`. Avoids a copy.
    public var inputSlot: UnsafeMutablePointer<Float> { history + (tapsPerPhase - 1) }

    /// Upper bound of outputs for `count` inputs.
    public func maxOutput(forInput count: Int) -> Int { (count * up) / down + 2 }

    /// Resamples `count` samples already written to `inputSlot`; writes the
    /// outputs to `output` and returns how many.
    public func process(count: Int, output: UnsafeMutablePointer<Float>) -> Int {
        precondition(count <= maxInput)
        let taps = tapsPerPhase
        let available = taps - 1 + count
        var produced = 0
        while index < available {
            let c = coefficients + phase * taps
            let x = history + (index - (taps - 1))
            var acc = SIMD8<Float>()
            var j = 0
            while j < taps {
                let cv = UnsafeRawPointer(c + j).loadUnaligned(as: SIMD8<Float>.self)
                let xv = UnsafeRawPointer(x + j).loadUnaligned(as: SIMD8<Float>.self)
                acc += cv * xv
                j += 8
            }
            output[produced] = acc.sum()
            produced += 1
            phase += down
            index += phase / up
            phase %= up
        }
        // Keep the newest T-1 samples as history for the next block.
        history.update(from: history + count, count: taps - 1)
        index -= count
        return produced
    }

    /// Convenience for whole signals (allocates): resamples and flushes the filter delay.
    public static func resample(_ samples: [Int16], from inputRate: Int, to outputRate: Int) -> [Int16] {
        if inputRate == outputRate { return samples }
        let block = 4096
        let r = PolyphaseResampler(inputRate: inputRate, outputRate: outputRate, maxInput: block)
        var out = [Float]()
        out.reserveCapacity(samples.count * outputRate / inputRate + 16)
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: r.maxOutput(forInput: block))
        defer { scratch.deallocate() }
        // Group delay of the prototype, in output samples, trimmed from the front.
        let delay = r.delayOutputSamples
        let padded = samples.count + r.tapsPerPhase
        var offset = 0
        while offset < padded {
            let n = min(block, padded - offset)
            for i in 0..<n {
                let s = offset + i
                r.inputSlot[i] = s < samples.count ? Float(samples[s]) : 0
            }
            let produced = r.process(count: n, output: scratch)
            out.append(contentsOf: UnsafeBufferPointer(start: scratch, count: produced))
            offset += n
        }
        let wanted = samples.count * outputRate / inputRate
        let trimmed = out.dropFirst(delay).prefix(wanted)
        return trimmed.map { Int16(clamping: Int(($0).rounded())) }
    }
}
