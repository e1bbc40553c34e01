/// The LED patterns as pure functions of time: whether a pattern that started
/// at `start` is lit at `now`, and when it next changes. No clock, no output.
public struct LEDAnimator: Sendable {
    public let timing: LEDTiming

    public init(timing: LEDTiming) { self.timing = timing }

    private var blinkNS: Int64 { Int64(timing.blinkMilliseconds) * 1_000_000 }
    private var pulseNS: Int64 { Int64(timing.pulseMilliseconds) * 1_000_000 }
    private var flashNS: Int64 { Int64(timing.flashMilliseconds) * 1_000_000 }
    private var frameNS: Int64 { timing.pwmHertz > 0 ? 1_000_000_000 / Int64(timing.pwmHertz) : 0 }

    /// The heartbeat used for `pulse` without PWM: on, off, on, then a long
    /// rest, as fractions of the pulse period (in thousandths).
    private static let heartbeat: [Int64] = [0, 120, 240, 360]

    public func isLit(_ pattern: LEDPattern, since start: Timestamp, at now: Timestamp) -> Bool {
        let elapsed = max(0, now.nanoseconds(since: start))
        switch pattern {
        case .off: return false
        case .on: return true
        case .flash: return elapsed < flashNS
        case .blink: return elapsed % blinkNS < blinkNS / 2
        case .pulse:
            if frameNS > 0 {
                let frameStart = elapsed - elapsed % frameNS
                return elapsed - frameStart < onTime(inFrameStartingAt: frameStart)
            }
            let phase = (elapsed % pulseNS) * 1000 / pulseNS
            return (phase >= Self.heartbeat[0] && phase < Self.heartbeat[1]) || (phase >= Self.heartbeat[2] && phase < Self.heartbeat[3])
        }
    }

    /// The first time after `now` at which `isLit` may change; nil for a steady pattern.
    public func nextChange(_ pattern: LEDPattern, since start: Timestamp, after now: Timestamp) -> Timestamp? {
        let elapsed = max(0, now.nanoseconds(since: start))
        switch pattern {
        case .off, .on: return nil
        case .flash: return elapsed < flashNS ? start.adding(nanoseconds: flashNS) : nil
        case .blink:
            let half = blinkNS / 2
            return start.adding(nanoseconds: (elapsed / half + 1) * half)
        case .pulse:
            if frameNS > 0 {
                let frameStart = elapsed - elapsed % frameNS
                let on = onTime(inFrameStartingAt: frameStart)
                let next = elapsed - frameStart < on ? frameStart + on : frameStart + frameNS
                return start.adding(nanoseconds: next)
            }
            let periodStart = elapsed - elapsed % pulseNS
            for mark in Self.heartbeat {
                let at = periodStart + mark * pulseNS / 1000
                if at > elapsed { return start.adding(nanoseconds: at) }
            }
            return start.adding(nanoseconds: periodStart + pulseNS)
        }
    }

    /// Software PWM: brightness rises and falls linearly over the pulse period,
    /// squared for the eye, and sampled once per frame.
    private func onTime(inFrameStartingAt frameStart: Int64) -> Int64 {
        let phase = Double(frameStart % pulseNS) / Double(pulseNS)
        let brightness = phase < 0.5 ? phase * 2 : (1 - phase) * 2
        return Int64(brightness * brightness * Double(frameNS))
    }
}
