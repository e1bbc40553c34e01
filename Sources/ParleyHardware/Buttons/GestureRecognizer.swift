import ParleyDevice
/// Software debounce from edge timestamps alone.
///
/// The first edge that changes the stable level is accepted at its own time;
/// edges in the following `debounce` window are bounce and only remembered.
/// When the window closes and the last remembered level differs from the
/// stable one, that change is accepted at the window's end. No clock is read:
/// the caller says what time it is, so bounce sequences replay exactly.
public struct Debouncer: Sendable {
    public private(set) var stable: Bool
    private var raw: Bool
    private var windowEnd: Timestamp?
    private let debounceNanoseconds: Int64

    public init(initial: Bool = false, debounceMilliseconds: Int) {
        stable = initial
        raw = initial
        debounceNanoseconds = Int64(debounceMilliseconds) * 1_000_000
    }

    /// When `advance(to:)` must next be called.
    public var deadline: Timestamp? { windowEnd }

    /// A raw edge: the line became `active` at `time`. Returns the accepted change, if any.
    public mutating func edge(active: Bool, at time: Timestamp) -> (active: Bool, at: Timestamp)? {
        raw = active
        if windowEnd != nil { return nil }
        return acceptIfChanged(at: time)
    }

    /// Closes a debounce window that has run out by `now`.
    public mutating func advance(to now: Timestamp) -> (active: Bool, at: Timestamp)? {
        guard let end = windowEnd, end <= now else { return nil }
        windowEnd = nil
        return acceptIfChanged(at: end)
    }

    private mutating func acceptIfChanged(at time: Timestamp) -> (active: Bool, at: Timestamp)? {
        guard raw != stable else { return nil }
        stable = raw
        if debounceNanoseconds > 0 { windowEnd = time.adding(nanoseconds: debounceNanoseconds) }
        return (stable, time)
    }
}

/// Turns a button's edges into gestures (press, long press, double press).
///
/// Pure and clock-free: feed it kernel edge timestamps with `edge(active:at:)`
/// and call `advance(to:)` when `deadline` passes. Rules:
/// - held for `longPress` → long press, reported at once while still held
///   (cancel must be prompt); the release that follows is ignored, and a
///   pending first press of a double press is dropped (cancel wins);
/// - released earlier → a short press; with a double-press window, it waits
///   for the window to close and becomes a double press if a second short
///   press began inside it (reported on the second release);
/// - with a window of 0, short presses are reported on release.
public struct GestureRecognizer: Sendable {
    public let timings: GestureTimings
    private var debouncer: Debouncer
    private var pressStart: Timestamp?
    private var longPressFired = false
    /// First press of a possible double press: (pressed, released).
    private var pendingFirst: (pressed: Timestamp, released: Timestamp)?
    /// The current press is the second of a double press.
    private var isSecondPress = false

    public init(timings: GestureTimings, initiallyPressed: Bool = false) {
        self.timings = timings
        debouncer = Debouncer(initial: initiallyPressed, debounceMilliseconds: timings.debounceMilliseconds)
        // Held at start: wait for the release, report nothing for it.
        if initiallyPressed { longPressFired = true }
    }

    public var isPressed: Bool { debouncer.stable }

    private var longPressNanoseconds: Int64 { Int64(timings.longPressMilliseconds) * 1_000_000 }
    private var windowNanoseconds: Int64 { Int64(timings.doublePressWindowMilliseconds) * 1_000_000 }

    /// The earliest time at which `advance(to:)` may produce something.
    public var deadline: Timestamp? {
        var candidates: [Timestamp] = []
        if let end = debouncer.deadline { candidates.append(end) }
        if let start = pressStart, !longPressFired { candidates.append(start.adding(nanoseconds: longPressNanoseconds)) }
        if let first = pendingFirst, pressStart == nil { candidates.append(first.released.adding(nanoseconds: windowNanoseconds)) }
        return candidates.min()
    }

    /// A raw edge at `time`. Deadlines before `time` are handled first, in order.
    public mutating func edge(active: Bool, at time: Timestamp) -> [ButtonEvent] {
        var gestures = advance(to: time)
        if let change = debouncer.edge(active: active, at: time) {
            gestures += transition(change.active, at: change.at)
        }
        return gestures
    }

    /// Handles every deadline up to and including `now`.
    public mutating func advance(to now: Timestamp) -> [ButtonEvent] {
        var gestures: [ButtonEvent] = []
        while let next = deadline, next <= now {
            gestures += fire(at: next)
        }
        return gestures
    }

    private mutating func fire(at time: Timestamp) -> [ButtonEvent] {
        if let end = debouncer.deadline, end == time {
            if let change = debouncer.advance(to: time) { return transition(change.active, at: change.at) }
            return []
        }
        if let start = pressStart, !longPressFired, start.adding(nanoseconds: longPressNanoseconds) == time {
            longPressFired = true
            pendingFirst = nil
            isSecondPress = false
            return [ButtonEvent(.longPress, pressedAt: start, recognizedAt: time)]
        }
        if let first = pendingFirst, pressStart == nil, first.released.adding(nanoseconds: windowNanoseconds) == time {
            pendingFirst = nil
            return [ButtonEvent(.press, pressedAt: first.pressed, recognizedAt: time)]
        }
        return []
    }

    private mutating func transition(_ active: Bool, at time: Timestamp) -> [ButtonEvent] {
        if active {
            pressStart = time
            longPressFired = false
            isSecondPress = pendingFirst != nil
            return []
        }
        guard let start = pressStart else { longPressFired = false; return [] }
        pressStart = nil
        if longPressFired {
            longPressFired = false
            return []
        }
        if isSecondPress, let first = pendingFirst {
            isSecondPress = false
            pendingFirst = nil
            return [ButtonEvent(.doublePress, pressedAt: first.pressed, recognizedAt: time)]
        }
        if windowNanoseconds == 0 {
            return [ButtonEvent(.press, pressedAt: start, recognizedAt: time)]
        }
        pendingFirst = (start, time)
        return []
    }
}
