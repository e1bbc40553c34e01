import ParleyDevice
import Synchronization

/// The LED state machine: from the device state to each LED's level, driven
/// by a timer on an injectable clock.
///
/// - A persistent state (idle, listening, ...) shows until the next one.
/// - A transient state (success, error) shows for `flash-ms` and then the
///   LEDs return to the persistent state, including one set meanwhile: the
///   engine may say "success" and "idle" back to back and the flash still shows.
///   During the flash, LEDs the transient state does not name follow the
///   persistent state.
/// - While the mute switch is on, the persistent state shown is `muted`.
/// - A level (the volume) shows as a bar for two flashes: the first LEDs in
///   board-file order lit in proportion, the rest off; then the state again.
/// - `shutdown()` turns every LED off and ignores later calls.
///
/// Output is written only on change; the timer is armed only for the next change.
public final class LEDController: Sendable {
    /// Writes one LED: (index in `Board.leds`, lit).
    public typealias Output = @Sendable (Int, Bool) -> Void

    private struct State {
        var base: DeviceState = .idle
        var baseSince: Timestamp
        var flash: (state: DeviceState, since: Timestamp)?
        /// LEDs lit by a level bar and since when.
        var bar: (lit: Int, since: Timestamp)?
        var muteSwitch = false
        var written: [Bool?]
        var displayed: DeviceState = .idle
        var timer: (any ScheduledAction)?
        var generation = 0
        var stopped = false
    }

    private let leds: [LED]
    private let table: [DeviceState: [Int: LEDPattern]]
    private let animator: LEDAnimator
    private let clock: any HardwareClock
    private let output: Output
    /// Told each change of `displayedState`, in order; it must not call back into the controller.
    private let onDisplayedStateChange: @Sendable (DeviceState) -> Void
    private let state: Mutex<State>

    public init(
        board: Board, clock: any HardwareClock, output: @escaping Output,
        onDisplayedStateChange: @escaping @Sendable (DeviceState) -> Void = { _ in }
    ) {
        leds = board.leds
        var table: [DeviceState: [Int: LEDPattern]] = [:]
        for (deviceState, patterns) in board.states {
            var byIndex: [Int: LEDPattern] = [:]
            for (name, pattern) in patterns {
                if let index = board.leds.firstIndex(where: { $0.name == name }) { byIndex[index] = pattern }
            }
            table[deviceState] = byIndex
        }
        self.table = table
        animator = LEDAnimator(timing: board.ledTiming)
        self.clock = clock
        self.output = output
        self.onDisplayedStateChange = onDisplayedStateChange
        state = Mutex(State(baseSince: clock.now(), written: Array(repeating: nil, count: board.leds.count)))
        tick()
    }

    /// The state the LEDs show now (a transient state while its flash lasts).
    public var displayedState: DeviceState { state.withLock { $0.displayed } }

    /// The level last written to each LED, in `Board.leds` order.
    public var levels: [Bool] { state.withLock { $0.written.map { $0 ?? false } } }

    /// Shows `newState` from now on (or, for success and error, for one flash).
    public func setState(_ newState: DeviceState) {
        let now = clock.now()
        let changed = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            if newState.isTransient {
                s.flash = (newState, now)
            } else if newState != s.base {
                s.base = newState
                s.baseSince = now
            } else {
                return false
            }
            return true
        }
        if changed { tick() }
    }

    /// Shows `level` of `maximum` as a bar for two flash periods (the volume
    /// after it changed): at least one LED for a level above 0, none for 0.
    public func showLevel(_ level: Int, of maximum: Int) {
        let now = clock.now()
        let fraction = maximum > 0 ? Double(min(max(level, 0), maximum)) / Double(maximum) : 0
        let lit = level > 0 ? max(1, Int((fraction * Double(leds.count)).rounded())) : 0
        let changed = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.bar = (lit, now)
            return true
        }
        if changed { tick() }
    }

    /// How long a level bar shows.
    private var barNanoseconds: Int64 { Int64(animator.timing.flashMilliseconds) * 2_000_000 }

    /// The mute switch's position: while on, the persistent state shown is `muted`.
    public func setMuteSwitch(_ on: Bool) {
        let now = clock.now()
        let changed = state.withLock { s -> Bool in
            guard !s.stopped, s.muteSwitch != on else { return false }
            s.muteSwitch = on
            s.baseSince = now
            return true
        }
        if changed { tick() }
    }

    /// Every LED off, timer stopped; later calls do nothing. Safe to call twice.
    public func shutdown() {
        let timer = state.withLock { s -> (any ScheduledAction)? in
            s.stopped = true
            s.generation += 1
            defer { s.timer = nil }
            return s.timer
        }
        timer?.cancel()
        state.withLock { s in
            for index in leds.indices {
                output(index, false)
                s.written[index] = false
            }
        }
    }

    /// Brings the outputs up to date for the current time and arms the timer for the next change.
    func tick() {
        let now = clock.now()
        let oldTimer = state.withLock { s -> (any ScheduledAction)? in
            guard !s.stopped else { return nil }
            if let flash = s.flash, now.nanoseconds(since: flash.since) >= Int64(animator.timing.flashMilliseconds) * 1_000_000 {
                s.flash = nil
            }
            if let bar = s.bar, now.nanoseconds(since: bar.since) >= barNanoseconds { s.bar = nil }
            let persistent: DeviceState = s.muteSwitch ? .muted : s.base
            let displayed = s.flash?.state ?? persistent
            if displayed != s.displayed {
                s.displayed = displayed
                // Called under the lock so observers see changes in order; it must not call back in.
                onDisplayedStateChange(displayed)
            }
            var next: Timestamp?
            func consider(_ time: Timestamp?) {
                guard let time else { return }
                next = next.map { min($0, time) } ?? time
            }
            if let flash = s.flash {
                consider(flash.since.adding(milliseconds: animator.timing.flashMilliseconds))
            }
            if let bar = s.bar { consider(bar.since.adding(nanoseconds: barNanoseconds)) }
            for index in leds.indices {
                let (pattern, since) = patternFor(index, persistent: persistent, in: s)
                let lit = animator.isLit(pattern, since: since, at: now)
                if s.written[index] != lit {
                    output(index, lit)
                    s.written[index] = lit
                }
                consider(animator.nextChange(pattern, since: since, after: now))
            }
            s.generation += 1
            let previous = s.timer
            s.timer = nil
            if let next {
                let generation = s.generation
                s.timer = clock.schedule(at: next) { [weak self] in self?.timerFired(generation) }
            }
            return previous
        }
        oldTimer?.cancel()
    }

    private func timerFired(_ generation: Int) {
        let current = state.withLock { $0.generation == generation && !$0.stopped }
        if current { tick() }
    }

    private func patternFor(_ index: Int, persistent: DeviceState, in s: State) -> (LEDPattern, Timestamp) {
        if let bar = s.bar { return (index < bar.lit ? .on : .off, bar.since) }
        if let flash = s.flash, let pattern = table[flash.state]?[index] {
            // A transient state's "on" lasts for the flash; "flash" is the same thing.
            return (pattern == .on ? .flash : pattern, flash.since)
        }
        return (table[persistent]?[index] ?? .off, s.baseSince)
    }
}
