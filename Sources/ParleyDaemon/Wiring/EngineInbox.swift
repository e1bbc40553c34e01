import Foundation
import ParleyCore
import Synchronization

/// What the listen thread hands to the engine.
enum Heard: Sendable, Equatable {
    /// A recognised utterance, as text without the wake words.
    case text(String)
    /// A command accepted with low confidence (`AskRule`): asked back first.
    case unsure(String)
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
    /// Starts handling `heard` and returns once it is queued on the engine,
    /// not when it is done: a task created here inherits the engine's
    /// isolation, so events start in the order they were heard, and one that
    /// arrives while an earlier one waits (an app performing) is handled
    /// meanwhile, which is how "cancel" reaches a running intent.
    func start(_ heard: Heard) {
        Task {
            switch heard {
            case .text(let text): await self.hear(text, confidence: nil)
            case .unsure(let text): await self.hear(text, confidence: nil, unsure: true)
            case .woken(let window): await self.woken(window: window)
            }
        }
    }
}
