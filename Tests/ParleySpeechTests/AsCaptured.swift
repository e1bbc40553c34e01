import ParleyAudio
import ParleySpeech

extension PCMAudio {
    /// The audio as a microphone in a quiet room delivers it: `lead` seconds
    /// of the room's floor (uniform noise of peak `floor`, seeded) before and
    /// after, and the same floor under it.
    ///
    /// Why: espeak-ng's output starts at its first sample and is digitally
    /// silent between words, and PocketSphinx's front end estimates the
    /// noise it removes (`-remove_noise`) from the first frames. Given speech
    /// there, about 1 render in 30 of "your twelve ounce latte will be ready
    /// in ten minutes" lost most of its words to that subtraction; zeros in
    /// front made it worse (11 in 120). With a floor and a lead-in, 0 in 120,
    /// the same as with the subtraction off (scratch measurement, 2026-11-27).
    public func asCaptured(floor: Int16 = 40, lead: Double = 0.3, seed: UInt64 = 11) -> PCMAudio {
        var generator = SplitMix64(seed: seed)
        func room(_ count: Int) -> [Int16] { (0..<count).map { _ in Int16.random(in: -floor...floor, using: &generator) } }
        let pad = Int(lead * Double(PCMAudio.sampleRate))
        let under = samples.map { sample -> Int16 in
            let noisy = Int(sample) + Int(Int16.random(in: -floor...floor, using: &generator))
            return Int16(clamping: noisy)
        }
        return PCMAudio(samples: room(pad) + under + room(pad))
    }
}
