import Synchronization

/// Keeps what a person says in order. The engine is an actor, and actors are
/// reentrant: while one utterance's handling waits (for the LED, for the
/// log, for a grammar to compile) the next one could run. "Hey, bake bread"
/// followed a second later by "hey, cancel" could then be decided backwards:
/// the cancel finds nothing open yet, and the bread bakes after all.
///
/// The listener's delivery gives each utterance a turn. An utterance is
/// handled only after the one before it has given its turn up. It gives up
/// its turn when its handling returns, when it starts waiting on an app's
/// perform (the perform can run for minutes, and "cancel" must reach it
/// meanwhile), or when the engine has settled and only waits for the
/// grammar of its new state (``ConversationEngine`` gives it up at those
/// points through ``current``).
public final class InputTurn: Sendable {
    /// The turn of the utterance whose handling this task carries out.
    @TaskLocal public static var current: InputTurn?

    private struct State {
        var released = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    public init() {}

    /// Lets the next utterance be handled. Calling it again does nothing.
    public func release() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.released else { return [] }
            state.released = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Whether the turn has been given up.
    public var isReleased: Bool { state.withLock { $0.released } }

    /// Returns once the turn has been given up.
    public func released() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.released { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
