/// Turns periods of what the card delivers (interleaved S16/S32, any channel
/// count and rate) into mono Int16 at the target rate: channels are averaged
/// (a two-mic HAT or a stereo USB microphone carries the same voice on both),
/// then `PolyphaseResampler` low-passes and resamples. 16 kHz mono S16 input
/// passes straight through.
///
/// Buffers are allocated in `init`; `convert` allocates nothing.
final class SampleConverter {
    let input: PCMFormat
    let outputRate: Int
    let maxFrames: Int
    private let resampler: PolyphaseResampler?
    private let floatOutput: UnsafeMutablePointer<Float>
    /// Converted samples of the last `convert` call.
    let output: UnsafeMutablePointer<Int16>
    let outputCapacity: Int

    init(input: PCMFormat, outputRate: Int, maxFrames: Int) {
        self.input = input
        self.outputRate = outputRate
        self.maxFrames = maxFrames
        if input.sampleRate != outputRate {
            let r = PolyphaseResampler(inputRate: input.sampleRate, outputRate: outputRate, maxInput: maxFrames)
            resampler = r
            outputCapacity = r.maxOutput(forInput: maxFrames)
        } else {
            resampler = nil
            outputCapacity = maxFrames
        }
        floatOutput = .allocate(capacity: outputCapacity)
        output = .allocate(capacity: outputCapacity)
    }

    deinit {
        floatOutput.deallocate()
        output.deallocate()
    }

    /// How many output samples late the resampler hands a sample out (0 without one).
    var delayOutputSamples: Int { resampler?.delayOutputSamples ?? 0 }

    var isPassThrough: Bool { resampler == nil && input.channels == 1 && input.format == .s16 }

    /// Converts `frames` interleaved frames at `raw`; the result is in `output[0..<return]`.
    func convert(_ raw: UnsafeRawPointer, frames: Int) -> Int {
        precondition(frames <= maxFrames)
        let channels = input.channels
        if let resampler {
            mixDown(raw, frames: frames, channels: channels, into: resampler.inputSlot)
            let produced = resampler.process(count: frames, output: floatOutput)
            for i in 0..<produced {
                output[i] = Self.toInt16(floatOutput[i])
            }
            return produced
        }
        if input.format == .s16 && channels == 1 {
            output.update(from: raw.assumingMemoryBound(to: Int16.self), count: frames)
            return frames
        }
        mixDown(raw, frames: frames, channels: channels, into: floatOutput)
        for i in 0..<frames { output[i] = Self.toInt16(floatOutput[i]) }
        return frames
    }

    /// Averages channels into Float samples on the Int16 scale.
    private func mixDown(_ raw: UnsafeRawPointer, frames: Int, channels: Int, into out: UnsafeMutablePointer<Float>) {
        let scale = 1 / Float(channels)
        switch input.format {
        case .s16:
            let s = raw.assumingMemoryBound(to: Int16.self)
            if channels == 1 {
                for i in 0..<frames { out[i] = Float(s[i]) }
            } else {
                for i in 0..<frames {
                    var sum: Int32 = 0
                    for c in 0..<channels { sum &+= Int32(s[i * channels + c]) }
                    out[i] = Float(sum) * scale
                }
            }
        case .s32:
            let s = raw.assumingMemoryBound(to: Int32.self)
            let toS16: Float = 1.0 / 65536
            for i in 0..<frames {
                var sum: Float = 0
                for c in 0..<channels { sum += Float(s[i * channels + c]) }
                out[i] = sum * scale * toS16
            }
        }
    }

    @inline(__always)
    static func toInt16(_ x: Float) -> Int16 {
        let r = x.rounded()
        if r >= 32767 { return .max }
        if r <= -32768 { return .min }
        return Int16(r)
    }
}
