import ParleyDevice
import Foundation
import Logging
import Synchronization

/// The button, the mute switch and the LEDs as the daemon sees them, on real
/// GPIO (`GPIOBoard`) or simulated (`SimulatedBoard`), with the same semantics.
public protocol HardwareBoard: AnyObject, Sendable {
    /// The board file this runs from.
    var board: Board { get }

    /// Gestures and mute-switch changes, in order. One consumer. The buffer
    /// is bounded (the newest `HardwareEventChannel.bufferSize` are kept) so a
    /// stalled consumer cannot grow memory; `droppedEvents` counts the rest.
    var events: AsyncStream<HardwareEvent> { get }
    var droppedEvents: Int { get }

    /// Each change of the state the LEDs show (`led: <state>` in the console). One consumer, bounded.
    var displayedStates: AsyncStream<DeviceState> { get }
    /// The state the LEDs show now.
    var displayedState: DeviceState { get }

    /// False when the confirmation button cannot be read (no chip, line busy,
    /// permission denied). The engine must then tell the person a
    /// confirmation needs the button that is missing, never order without it.
    var isButtonAvailable: Bool { get }
    /// Why the button (or the GPIO chip) is unavailable, for status and logs.
    var unavailableReason: String? { get }

    /// The mute switch is on (listening must stop). False on boards without one.
    var isMuted: Bool { get }

    /// Shows a device state on the LEDs.
    func setState(_ state: DeviceState)

    /// Shows a level (the volume) on the LEDs for a moment, as a bar.
    func showLevel(_ level: Int, of maximum: Int)

    /// Stops reading inputs, turns every LED off, releases the lines and
    /// finishes both streams. The daemon calls it on SIGTERM; safe to call twice.
    func shutdown()
}

extension Board {
    /// Opens the board this file describes: `SimulatedBoard` for `kind: simulated`,
    /// otherwise `GPIOBoard`, which starts even without its chip (see `isButtonAvailable`).
    public func open(logger: Logger) -> any HardwareBoard {
        switch kind {
        case .simulated: return SimulatedBoard(board: self, logger: logger)
        case .gpio: return GPIOBoard(board: self, logger: logger)
        }
    }
}

/// The two bounded streams both boards publish, with a count of what was dropped.
final class HardwareEventChannel: Sendable {
    static let bufferSize = 32

    let events: AsyncStream<HardwareEvent>
    let states: AsyncStream<DeviceState>
    private let eventContinuation: AsyncStream<HardwareEvent>.Continuation
    private let stateContinuation: AsyncStream<DeviceState>.Continuation
    private let dropped = Mutex(0)

    init() {
        (events, eventContinuation) = AsyncStream.makeStream(of: HardwareEvent.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
        (states, stateContinuation) = AsyncStream.makeStream(of: DeviceState.self, bufferingPolicy: .bufferingNewest(Self.bufferSize))
    }

    var droppedEvents: Int { dropped.withLock { $0 } }

    func send(_ event: HardwareEvent) {
        if case .dropped = eventContinuation.yield(event) { dropped.withLock { $0 += 1 } }
    }

    func send(_ state: DeviceState) {
        _ = stateContinuation.yield(state)
    }

    func finish() {
        eventContinuation.finish()
        stateContinuation.finish()
    }
}
