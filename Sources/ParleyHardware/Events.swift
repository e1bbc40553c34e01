import ParleyDevice

/// A point on the kernel's monotonic clock (CLOCK_MONOTONIC), in nanoseconds.
///
/// GPIO edge events from the kernel (Linux 5.7 and later) carry timestamps on
/// this clock, so gestures are recognised from the kernel's own times, and the
/// LED timer uses the same scale.
public struct Timestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func milliseconds(_ ms: Int64) -> Timestamp { Timestamp(nanoseconds: ms * 1_000_000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public func adding(milliseconds ms: Int) -> Timestamp {
        Timestamp(nanoseconds: nanoseconds + Int64(ms) * 1_000_000)
    }

    public func adding(nanoseconds ns: Int64) -> Timestamp { Timestamp(nanoseconds: nanoseconds + ns) }

    /// `self - other` in nanoseconds.
    public func nanoseconds(since other: Timestamp) -> Int64 { nanoseconds - other.nanoseconds }

    public var description: String {
        let ms = Double(nanoseconds) / 1_000_000
        return "\(ms)ms"
    }
}

/// A recognised button gesture (ParleyDevice's `ButtonGesture`) with the kernel
/// timestamps it was recognised from.
public struct ButtonEvent: Equatable, Sendable {
    public var kind: ButtonGesture
    /// When the (first) press began, from the kernel event timestamp.
    public var pressedAt: Timestamp
    /// When the gesture became certain (a release, or a timer running out).
    public var recognizedAt: Timestamp

    public init(_ kind: ButtonGesture, pressedAt: Timestamp, recognizedAt: Timestamp) {
        self.kind = kind
        self.pressedAt = pressedAt
        self.recognizedAt = recognizedAt
    }
}

/// What the board reports to the engine.
public enum HardwareEvent: Equatable, Sendable {
    case button(ButtonEvent)
    /// The mute switch moved: `true` means listening must stop and the muted state shows.
    case mute(Bool)
    /// A named input line (board file `inputs:`) changed, after debouncing:
    /// `active` true is its rising edge (the line became active).
    case input(name: String, active: Bool)
}

/// What a gesture means at this moment (docs/spec.md §10): confirm during a
/// confirmation, cancel on a long press at any time, and when idle what the
/// board file says.
public enum ButtonAction: Equatable, Sendable {
    case confirm
    case cancel
    case pushToTalk
    case suggestion
    case doublePress(DoublePressAction)
    /// The gesture means nothing now (e.g. a short press while speaking).
    case none
}

/// What the engine is doing when the button is used, for `ButtonSettings.action(for:in:)`.
public enum ButtonContext: Sendable {
    case idle
    case awaitingConfirmation
    /// Listening, thinking or speaking.
    case busy
}
