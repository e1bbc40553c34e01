import Foundation

/// The power spectrum of a real frame. Used by the keyword network's
/// features (ParleySpeech) and the speech embedding's mel stage, 100 frames
/// a second each while they listen.
///
/// Why it is shaped this way: a real frame of N values is packed as N/2
/// complex ones (even samples real, odd imaginary), transformed by an
/// iterative radix-2 FFT of N/2 points, and the N/2 + 1 bins of the real
/// frame are split out of that, half the butterflies of transforming it as
/// a complex frame with zero imaginary parts. The loops run on unsafe
/// buffers: with Swift's bounds and uniqueness checks in the butterflies,
/// this stage was 29% of the keyword network's instructions.
package struct RealFFT {
    package let size: Int
    /// cos and sin of -2πj/size for j in 0..<size/2: the half-size
    /// transform's twiddles (every (size/2)/h-th of them at span h) and the
    /// split's.
    private let cosines: [Double]
    private let sines: [Double]
    /// Bit reversal of 0..<size/2.
    private let reversed: [Int]
    private var re: [Double]
    private var im: [Double]

    package init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "RealFFT: size \(size), expected a power of two")
        self.size = size
        let half = size / 2
        cosines = (0..<half).map { cos(-2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<half).map { sin(-2 * Double.pi * Double($0) / Double(size)) }
        let bits = half.trailingZeroBitCount
        reversed = (0..<half).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
        re = Array(repeating: 0, count: half)
        im = Array(repeating: 0, count: half)
    }

    /// |X[k]|² for k in 0...size/2 of the real signal `input` (size values).
    package mutating func power(of input: inout [Double], into power: inout [Double]) {
        precondition(input.count >= size && power.count > size / 2, "RealFFT: \(input.count) in, \(power.count) out for size \(size)")
        let m = size / 2
        re.withUnsafeMutableBufferPointer { re in
            im.withUnsafeMutableBufferPointer { im in
                input.withUnsafeBufferPointer { x in
                    reversed.withUnsafeBufferPointer { reversed in
                        for i in 0..<m {
                            re[reversed[i]] = x[2 * i]
                            im[reversed[i]] = x[2 * i + 1]
                        }
                    }
                }
                cosines.withUnsafeBufferPointer { cosines in
                    sines.withUnsafeBufferPointer { sines in
                        var span = 1
                        while span < m {
                            let step = m / span
                            var start = 0
                            while start < m {
                                for k in 0..<span {
                                    let c = cosines[k * step], s = sines[k * step]
                                    let a = start + k, b = a + span
                                    let tr = re[b] * c - im[b] * s
                                    let ti = re[b] * s + im[b] * c
                                    re[b] = re[a] - tr
                                    im[b] = im[a] - ti
                                    re[a] += tr
                                    im[a] += ti
                                }
                                start += 2 * span
                            }
                            span *= 2
                        }
                        power.withUnsafeMutableBufferPointer { p in
                            // X[0] and X[m] are real: the sum and difference of Z[0]'s parts.
                            p[0] = (re[0] + im[0]) * (re[0] + im[0])
                            p[m] = (re[0] - im[0]) * (re[0] - im[0])
                            for k in 1..<m {
                                // E (the even samples' transform) = (Z[k] + conj Z[m-k]) / 2,
                                // O (the odd ones') = (Z[k] - conj Z[m-k]) / 2i, X[k] = E + W^k O.
                                let zr = re[k], zi = im[k], yr = re[m - k], yi = -im[m - k]
                                let er = (zr + yr) / 2, ei = (zi + yi) / 2
                                let or = (zi - yi) / 2, oi = -(zr - yr) / 2
                                let c = cosines[k], s = sines[k]
                                let xr = er + c * or - s * oi
                                let xi = ei + c * oi + s * or
                                p[k] = xr * xr + xi * xi
                            }
                        }
                    }
                }
            }
        }
    }
}
