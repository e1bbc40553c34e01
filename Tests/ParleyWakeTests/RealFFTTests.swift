import Foundation
import Testing
@testable import ParleyWake

/// RealFFT (the half-size transform and its split) against the DFT's
/// definition, sum of x[n] e^(-2πikn/N), bin by bin.
@Suite struct RealFFTTests {
    static func dftPower(_ x: [Double]) -> [Double] {
        let n = x.count
        return (0...(n / 2)).map { k in
            var re = 0.0, im = 0.0
            for (i, v) in x.enumerated() {
                let angle = -2 * Double.pi * Double(k * i % n) / Double(n)
                re += v * cos(angle)
                im += v * sin(angle)
            }
            return re * re + im * im
        }
    }

    @Test(arguments: [2, 4, 8, 64, 512])
    func powerIsTheDFTs(size: Int) {
        var generator = SystemRandomNumberGenerator()
        var fft = RealFFT(size: size)
        for _ in 0..<3 {
            var frame = (0..<size).map { _ in Double.random(in: -1...1, using: &generator) }
            var power = [Double](repeating: -1, count: size / 2 + 1)
            fft.power(of: &frame, into: &power)
            let expected = Self.dftPower(frame)
            let scale = expected.max() ?? 1
            for k in 0...(size / 2) {
                #expect(abs(power[k] - expected[k]) <= 1e-9 * scale, "size \(size), bin \(k): \(power[k]) against \(expected[k])")
            }
        }
    }

    @Test func aToneLandsInItsBin() {
        var fft = RealFFT(size: 512)
        var frame = (0..<512).map { cos(2 * Double.pi * 37 * Double($0) / 512) }
        var power = [Double](repeating: 0, count: 257)
        fft.power(of: &frame, into: &power)
        #expect(abs(power[37] - 256 * 256) < 1e-6)
        #expect(power.enumerated().filter { $0.offset != 37 }.allSatisfy { $0.element < 1e-12 })
    }
}
