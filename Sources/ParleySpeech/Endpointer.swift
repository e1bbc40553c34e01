/// Finds the end of an utterance from trailing silence, with an adaptive
/// noise floor (10 ms frames). A small stand-in for ParleyAudio's VAD so the
/// recognition service works on raw frames.
public struct Endpointer: Sendable {
    public enum State: Sendable, Equatable { case waiting, speaking, ended, timedOut }

    /// Trailing silence that ends an utterance.
    public var trailingSilence = 0.6
    /// Give up when no speech starts within this time.
    public var startTimeout = 4.0
    /// Longest utterance.
    public var maximumLength = 10.0
    /// Speech is this many times the noise floor's energy.
    public var ratio = 4.0

    public private(set) var state: State = .waiting
    private var floor = 1e4
    private var pending: [Int16] = []
    private var elapsed = 0.0
    private var silence = 0.0
    private var speech = 0.0

    public init() {}

    /// Feeds samples; returns the state after them.
    public mutating func feed<C: Collection>(_ samples: C) -> State where C.Element == Int16 {
        pending.append(contentsOf: samples)
        while pending.count >= 160, state == .waiting || state == .speaking {
            let frame = pending.prefix(160)
            let energy = frame.reduce(0.0) { $0 + Double($1) * Double($1) } / 160
            pending.removeFirst(160)
            elapsed += 0.01
            let isSpeech = energy > floor * ratio && energy > 1e4
            if !isSpeech { floor = 0.95 * floor + 0.05 * max(energy, 100) }
            switch state {
            case .waiting:
                if isSpeech { speech += 0.01; if speech >= 0.1 { state = .speaking; silence = 0 } } else { speech = 0 }
                if state == .waiting && elapsed >= startTimeout { state = .timedOut }
            case .speaking:
                silence = isSpeech ? 0 : silence + 0.01
                if silence >= trailingSilence || elapsed >= maximumLength { state = .ended }
            default: break
            }
        }
        return state
    }
}
