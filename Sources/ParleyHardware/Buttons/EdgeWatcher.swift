import ParleyDevice
import CGPIOD
import Dispatch
import Foundation
import Logging
import Synchronization

/// Reads GPIO edge events on a dedicated thread.
///
/// The thread blocks in poll() on the lines' event file descriptors and on an
/// eventfd that `stop()` writes, so it sleeps until an edge, a gesture
/// deadline or shutdown, with no polling loop, and stops at once. Gestures are
/// recognised from the kernel's event timestamps.
final class EdgeWatcher: Sendable {
    enum Role: Sendable {
        case button(ButtonSettings)
        case muteSwitch(InputLine)
        /// A named input of the board file, reported on each debounced change.
        case named(String, InputLine)
        /// A volume button: each debounced press is the gesture.
        case volumeButton(ButtonGesture, InputLine)
    }

    struct Input: Sendable {
        let line: RequestedLine
        let role: Role
        /// The level read at start: a held button or an engaged switch.
        let initiallyActive: Bool
    }

    /// Event timestamps further than this from CLOCK_MONOTONIC are not on it
    /// (kernels before 5.7 stamped line events with CLOCK_REALTIME); such
    /// events are stamped with the time they were read instead.
    static let timestampTolerance: Int64 = 10_000_000_000

    private let functions: GPIODFunctions
    /// Emptied by `stop()`, so the lines are released as soon as the thread
    /// has finished, whenever the thread object itself goes away.
    private let inputs: Locked<[Input]>
    private let wakeFD: Int32
    private let emit: @Sendable (HardwareEvent) -> Void
    private let logger: Logger
    private let finished = DispatchSemaphore(value: 0)
    private let running = ManagedFlag()

    init(functions: GPIODFunctions, inputs: [Input], logger: Logger, emit: @escaping @Sendable (HardwareEvent) -> Void) throws(GPIOError) {
        self.functions = functions
        self.inputs = Locked(inputs)
        self.logger = logger
        self.emit = emit
        switch functions.check("eventfd", "the GPIO watcher's wake-up", { functions.eventfdCreate() }) {
        case .success(let fd): wakeFD = fd
        case .failure(let error): throw error
        }
    }

    func start() {
        guard running.set() else { return }
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "parley-gpio"
        thread.start()
    }

    /// Wakes the thread through the eventfd and waits for it to finish. Safe to call twice.
    func stop() {
        guard running.clear() else { return }
        _ = functions.check("write", "the GPIO watcher's eventfd") { functions.eventfdWrite(wakeFD) }
        finished.wait()
        inputs.withLock { $0 = [] }
    }

    deinit {
        stop()
        _ = functions.close(wakeFD)
    }

    // MARK: The thread

    /// Per-input state, owned by the thread.
    private enum Recogniser {
        case button(GestureRecognizer)
        case muteSwitch(Debouncer)
        case named(String, Debouncer)
        case volume(ButtonGesture, Debouncer)

        var deadline: Timestamp? {
            switch self {
            case .button(let r): return r.deadline
            case .muteSwitch(let d), .named(_, let d), .volume(_, let d): return d.deadline
            }
        }

        /// A volume button's debounced presses (releases say nothing).
        static func presses(_ changes: [(active: Bool, at: Timestamp)], _ gesture: ButtonGesture) -> [HardwareEvent] {
            changes.filter(\.active).map { .button(ButtonEvent(gesture, pressedAt: $0.at, recognizedAt: $0.at)) }
        }

        mutating func edge(active: Bool, at time: Timestamp) -> [HardwareEvent] {
            switch self {
            case .button(var r):
                defer { self = .button(r) }
                return r.edge(active: active, at: time).map(HardwareEvent.button)
            case .muteSwitch(var d):
                defer { self = .muteSwitch(d) }
                var events: [HardwareEvent] = []
                if let change = d.advance(to: time) { events.append(.mute(change.active)) }
                if let change = d.edge(active: active, at: time) { events.append(.mute(change.active)) }
                return events
            case .named(let name, var d):
                defer { self = .named(name, d) }
                var events: [HardwareEvent] = []
                if let change = d.advance(to: time) { events.append(.input(name: name, active: change.active)) }
                if let change = d.edge(active: active, at: time) { events.append(.input(name: name, active: change.active)) }
                return events
            case .volume(let gesture, var d):
                defer { self = .volume(gesture, d) }
                return Self.presses([d.advance(to: time), d.edge(active: active, at: time)].compactMap { $0 }, gesture)
            }
        }

        mutating func advance(to now: Timestamp) -> [HardwareEvent] {
            switch self {
            case .button(var r):
                defer { self = .button(r) }
                return r.advance(to: now).map(HardwareEvent.button)
            case .muteSwitch(var d):
                defer { self = .muteSwitch(d) }
                return d.advance(to: now).map { [.mute($0.active)] } ?? []
            case .named(let name, var d):
                defer { self = .named(name, d) }
                return d.advance(to: now).map { [.input(name: name, active: $0.active)] } ?? []
            case .volume(let gesture, var d):
                defer { self = .volume(gesture, d) }
                return Self.presses(d.advance(to: now).map { [$0] } ?? [], gesture)
            }
        }
    }

    private func run() {
        let inputs = self.inputs.withLock { $0 }
        var recognisers: [Recogniser] = inputs.map { input in
            switch input.role {
            case .button(let settings):
                return .button(GestureRecognizer(timings: settings.timings, initiallyPressed: input.initiallyActive))
            case .muteSwitch(let line):
                return .muteSwitch(Debouncer(initial: input.initiallyActive, debounceMilliseconds: line.debounceMilliseconds))
            case .named(let name, let line):
                return .named(name, Debouncer(initial: input.initiallyActive, debounceMilliseconds: line.debounceMilliseconds))
            case .volumeButton(let gesture, let line):
                return .volume(gesture, Debouncer(initial: input.initiallyActive, debounceMilliseconds: line.debounceMilliseconds))
            }
        }
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        for input in inputs {
            switch input.line.eventFD() {
            case .success(let fd): fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            case .failure(let error):
                logger.error("GPIO input not watched: \(error)")
                fds.append(pollfd(fd: -1, events: 0, revents: 0))
            }
        }
        while true {
            let before = functions.monotonicNow()
            let deadline = recognisers.compactMap(\.deadline).min()
            let timeout: Int32 = deadline.map { Int32(clamping: max(0, ($0.nanoseconds(since: before) + 999_999) / 1_000_000)) } ?? -1
            let count = UInt(fds.count)
            let polled = fds.withUnsafeMutableBufferPointer { buffer in
                functions.check("poll", "GPIO event descriptors") { functions.poll(buffer.baseAddress!, count, timeout) }
            }
            guard case .success(let ready) = polled else {
                if case .failure(let error) = polled { logger.error("GPIO watcher stopped: \(error)") }
                return
            }
            if fds[0].revents != 0 { return }
            if ready == 0 {
                // Nothing is queued, so no edge older than now can still arrive:
                // deadlines up to now are final. (Queued edges are always read
                // first, so a release just before the long-press time wins.)
                let now = functions.monotonicNow()
                for index in recognisers.indices {
                    for event in recognisers[index].advance(to: now) { emit(event) }
                }
                continue
            }
            for index in inputs.indices where fds[index + 1].revents != 0 {
                let fd = fds[index + 1].fd
                fds[index + 1].revents = 0
                switch inputs[index].line.readEvent(fd: fd) {
                case .success(let event):
                    let read = functions.monotonicNow()
                    let stamp = abs(event.at.nanoseconds(since: read)) > Self.timestampTolerance ? read : event.at
                    for gesture in recognisers[index].edge(active: event.active, at: stamp) { emit(gesture) }
                case .failure(let error):
                    // A line that fails to read (e.g. the chip went away) is dropped rather than spun on.
                    logger.error("GPIO input no longer watched: \(error)")
                    fds[index + 1].fd = -1
                }
            }
        }
    }
}

/// A set-once/clear-once flag.
final class ManagedFlag: Sendable {
    private let value = Mutex(false)

    /// Sets the flag; false if it was already set.
    func set() -> Bool { value.withLock { old in defer { old = true }; return !old } }
    /// Clears the flag; false if it was not set.
    func clear() -> Bool { value.withLock { old in defer { old = false }; return old } }
}

/// A `Mutex` that closures can share (a `Mutex` itself cannot be copied into them).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
