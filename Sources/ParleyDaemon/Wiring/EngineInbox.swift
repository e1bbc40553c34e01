import Foundation
import ParleyCore
import Synchronization

/// What the listen thread hands to the engine.
enum Heard: Sendable, Equatable {
    /// A recognised utterance, as text without the wake words.
    case text(String)
    /// A command accepted with low confidence (`AskRule`): asked back first;
    /// `doubted`: its words the recogniser is unsure of (`AskRule.doubted`).
    case unsure(String, doubted: [String] = [])
    /// "hey <name>" alone, confirmed by the wake detector: open a window.
    case woken(window: TimeInterval)
}

/// The listen thread's way into async code: a bounded stream of rare events
/// (docs/architecture.md, real-time rule 3). `send` never blocks; when the
/// engine falls this far behind, further events are dropped and counted.
final class EngineInbox: Sendable {
    let events: AsyncStream<Heard>
    private let continuation: AsyncStream<Heard>.Continuation
    private let droppedCount = Atomic<Int>(0)

    init(capacity: Int = 16) {
        (events, continuation) = AsyncStream.makeStream(of: Heard.self, bufferingPolicy: .bufferingOldest(capacity))
    }

    /// From the listen thread: queues `event` or counts it as dropped.
    func send(_ event: Heard) {
        if case .dropped = continuation.yield(event) { droppedCount.add(1, ordering: .relaxed) }
    }

    /// Events dropped because the buffer was full.
    var dropped: Int { droppedCount.load(ordering: .relaxed) }

    func finish() { continuation.finish() }
}

extension ConversationEngine {
    /// Starts handling `heard` once the utterance before it (`previous`) has
    /// given up its turn, and returns this one's turn at once, not when it
    /// is handled: the listen thread's delivery never waits for the engine.
    /// Utterances are thus decided in the order they were said (``InputTurn``),
    /// and one that arrives while an app performs is handled meanwhile,
    /// which is how "cancel" reaches a running intent.
    func start(_ heard: Heard, after previous: InputTurn?) -> InputTurn {
        let turn = InputTurn()
        Task {
            await previous?.released()
            await InputTurn.$current.withValue(turn) {
                switch heard {
                case .text(let text): await self.hear(text, confidence: nil)
                case .unsure(let text, let doubted): await self.hear(text, confidence: nil, unsure: true, doubted: doubted)
                case .woken(let window): await self.woken(window: window)
                }
            }
            turn.release()
        }
        return turn
    }
}
