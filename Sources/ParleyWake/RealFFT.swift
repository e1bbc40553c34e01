import Foundation

/// The power spectrum of a real frame: an iterative radix-2 FFT of a
/// power-of-two size, twiddles and bit reversal computed once. Used by the
/// keyword network's features (ParleySpeech) and the speech embedding's
/// mel stage.
package struct RealFFT {
    package let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]
    private var re: [Double]
    private var im: [Double]

    package init(size: Int) {
        precondition(size > 1 && size & (size - 1) == 0, "RealFFT: size \(size), expected a power of two")
        self.size = size
        cosines = (0..<(size / 2)).map { cos(-2 * Double.pi * Double($0) / Double(size)) }
        sines = (0..<(size / 2)).map { sin(-2 * Double.pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
        re = Array(repeating: 0, count: size)
        im = Array(repeating: 0, count: size)
    }

    /// |X[k]|² for k in 0...size/2 of the real signal `input` (size values).
    package mutating func power(of input: inout [Double], into power: inout [Double]) {
        for i in 0..<size {
            re[reversed[i]] = input[i]
            im[i] = 0
        }
        var half = 1
        while half < size {
            let step = size / (2 * half)
            var start = 0
            while start < size {
                for k in 0..<half {
                    let (c, s) = (cosines[k * step], sines[k * step])
                    let a = start + k, b = a + half
                    let tr = re[b] * c - im[b] * s
                    let ti = re[b] * s + im[b] * c
                    re[b] = re[a] - tr
                    im[b] = im[a] - ti
                    re[a] += tr
                    im[a] += ti
                }
                start += 2 * half
            }
            half *= 2
        }
        for k in 0...(size / 2) { power[k] = re[k] * re[k] + im[k] * im[k] }
    }
}
