import Dispatch
import ParleyCore
import ParleySpeech
import ServiceLifecycle
import Synchronization

/// Compiles the grammars listening asks for, one at a time, on a serial
/// dispatch queue of its own ("parley-grammar"), never in the asking task.
///
/// Why: compiling the commands grammar takes seconds of CPU on a slow board
/// (4.7-6.0 s under qemu-user, BENCHMARKS.md "The stop on a slow CPU") and
/// cannot be interrupted. Compiled in the asking task (the shortcut
/// folder's reload at start, an app installed, a conversation ended), it
/// held a cooperative-pool thread and kept that service running past a stop:
/// the stop watchdog ended parleyd at 4 s naming `still-running=ShortcutFolder`.
/// Here the asker only waits, and stops waiting as soon as its task is
/// cancelled or shut down gracefully, or listening stops (``stop()``): no
/// stop waits for a compile. A compile under way when parleyd exits is simply
/// abandoned with the process (it touches nothing but its own memory).
///
/// Newest wins: a request made while an older one still waits for the queue
/// replaces it, and a grammar whose compile ends after a newer request was
/// made is dropped, not installed. (When each asker compiled for itself, the
/// slow commands grammar of a reload could finish after a question's quick
/// answers grammar and replace it while the question was open.)
final class GrammarBuilds: Sendable {
    typealias Compile = @Sendable (PhraseModel) throws -> WordGraph

    /// One requested grammar; `version` orders requests (1, 2, ...).
    struct Build: Sendable {
        let version: Int
        let model: PhraseModel
        let kind: ListeningPipeline.Kind
    }

    /// The grammar the listen thread is to use: the newest compiled, or the
    /// initial one (version 0) until then.
    struct Current: Sendable {
        var model = PhraseModel()
        var graph: WordGraph?
        var kind = ListeningPipeline.Kind.commands
        var version = 0
    }

    /// What a compile's end did (for logging and the tests).
    enum Outcome: Sendable, Equatable {
        case installed(version: Int)
        case failed(version: Int, error: String)
        /// A newer request was made while it compiled, or building stopped.
        case dropped(version: Int)
    }

    private struct State {
        var current = Current()
        /// The grammar the listen thread is compiling for itself at start
        /// (version 0 once `setInitial` installs it).
        var initialModel: PhraseModel?
        /// The newest request's version.
        var latest = 0
        /// The newest request not yet compiling (an older one it replaced is never compiled).
        var waiting: Build?
        /// True while the queue has a drain job scheduled or running.
        var draining = false
        /// Every request up to this version is settled: it, or a newer
        /// request, was compiled and installed, or failed.
        var settled = 0
        var stopped = false
        var nextTicket = 0
        /// Askers waiting for a version to settle, by ticket.
        var waiters: [Int: (version: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        /// Tickets whose wait was abandoned before it suspended.
        var abandoned: Set<Int> = []
    }

    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "parley-grammar", qos: .utility)
    private let compile: Compile
    private let finished: @Sendable (Outcome) -> Void

    /// `finished` is called on the queue with every compile's outcome.
    init(compile: @escaping Compile,
         finished: @escaping @Sendable (Outcome) -> Void = { _ in }) {
        self.compile = compile
        self.finished = finished
    }

    /// The grammar to listen with.
    var current: Current { state.withLock { $0.current } }
    /// Whether a requested grammar is still to be compiled or installed (a
    /// failed compile counts as done: the previous grammar stays).
    var isCompiling: Bool { state.withLock { !$0.stopped && $0.latest > $0.settled } }
    /// Its version alone (read by the listen thread at every utterance event).
    var currentVersion: Int { state.withLock { $0.current.version } }

    /// Says which grammar the listen thread is about to compile as version
    /// 0, before it does: a request for the same one meanwhile is that one.
    func expectInitial(_ model: PhraseModel) {
        state.withLock { s in
            if s.current.version == 0 && s.current.graph == nil { s.initialModel = model }
        }
    }

    /// The grammar listening starts with, compiled by the listen thread
    /// while it loads the decoders; kept unless a request was installed first.
    func setInitial(_ model: PhraseModel, graph: WordGraph) {
        state.withLock { s in
            if s.current.version == 0 { s.current = Current(model: model, graph: graph, kind: .commands, version: 0) }
        }
    }

    /// Asks for `model` compiled and made current; its version, or nil once stopped.
    /// The grammar already current, with nothing else asked for meanwhile,
    /// is not compiled again: the engine asks for the commands at start (the
    /// listen thread compiled them already) and after every conversation,
    /// and a rebuild of the same grammar costs seconds on a slow board and
    /// makes what is said meanwhile decoded twice.
    func request(_ model: PhraseModel, kind: ListeningPipeline.Kind) -> Int? {
        let (version, schedule) = state.withLock { s -> (Int?, Bool) in
            guard !s.stopped else { return (nil, false) }
            // Before the listen thread installed its start grammar, that is
            // the one a request is compared with (listening has not begun).
            let installed = s.current.graph != nil ? s.current.model : s.initialModel
            if s.latest == s.settled, s.current.kind == kind, installed == model {
                return (s.current.version, false)
            }
            s.latest += 1
            s.waiting = Build(version: s.latest, model: model, kind: kind)
            defer { s.draining = true }
            return (s.latest, !s.draining)
        }
        if schedule { queue.async { [self] in drain() } }
        return version
    }

    /// Waits until the grammar of `version` or a newer one is installed (or
    /// failed to compile, the previous grammar staying). Returns false,
    /// without waiting for the compile, when building stopped or the calling
    /// task is cancelled or shut down gracefully.
    @discardableResult
    func wait(for version: Int) async -> Bool {
        let ticket = state.withLock { s -> Int in
            defer { s.nextTicket += 1 }
            return s.nextTicket
        }
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.stopped || s.settled >= version || s.abandoned.remove(ticket) != nil { return true }
                    s.waiters[ticket] = (version, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancelOrGracefulShutdown: { [self] in
            abandon(ticket)
        }
        return state.withLock { s in
            s.abandoned.remove(ticket)
            return s.settled >= version
        }
    }

    /// Ends every wait and drops what is waiting or compiling: listening has stopped.
    func stop() {
        let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.stopped = true
            s.waiting = nil
            defer { s.waiters.removeAll() }
            return s.waiters.values.map(\.continuation)
        }
        for continuation in waiting { continuation.resume() }
    }

    private func abandon(_ ticket: Int) {
        let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let waiter = s.waiters.removeValue(forKey: ticket) else {
                s.abandoned.insert(ticket)  // not suspended yet: it returns at once when it tries
                return nil
            }
            return waiter.continuation
        }
        continuation?.resume()
    }

    /// On the queue: compiles the newest waiting request until none is left.
    private func drain() {
        while let build = state.withLock({ s -> Build? in
            guard let next = s.waiting, !s.stopped else {
                s.draining = false
                return nil
            }
            s.waiting = nil
            return next
        }) {
            let outcome: Outcome
            do {
                let graph = try compile(build.model)
                // Installed only while still the newest: checked and done under the
                // lock so a stop or a newer request cannot slip in between.
                outcome = state.withLock { s -> Outcome in
                    guard !s.stopped, s.latest == build.version else { return .dropped(version: build.version) }
                    s.current = Current(model: build.model, graph: graph, kind: build.kind, version: build.version)
                    return .installed(version: build.version)
                }
            } catch {
                outcome = state.withLock { s in s.latest == build.version ? .failed(version: build.version, error: "\(error)") : .dropped(version: build.version) }
            }
            finished(outcome)
            if case .dropped = outcome { continue }
            let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.settled = max(s.settled, build.version)
                let due = s.waiters.filter { $0.value.version <= s.settled }
                for ticket in due.keys { s.waiters.removeValue(forKey: ticket) }
                return due.values.map(\.continuation)
            }
            for continuation in ready { continuation.resume() }
        }
    }
}
