import ParleyDevice
import Logging
import Synchronization

/// The board for machines without GPIO (a development machine, CI, the QEMU
/// image): a product path, not a test fake. Presses are injected by the
/// command-line tool and the console (`:press`, `:long-press`, `:double-press`),
/// and LED states are observable through `displayedStates` and `displayedState`.
///
/// It runs the same `LEDController` as the GPIO board, so flashes, the mute
/// switch and shutdown behave identically; only the output is in memory.
public final class SimulatedBoard: HardwareBoard {
    public let board: Board
    private let channel = HardwareEventChannel()
    private let leds: LEDController
    private let muted = Locked(false)
    /// The level of each named input (all inactive at start).
    private let inputLevels: Locked<[String: Bool]>
    private let stopped = ManagedFlag()
    private let clock: any HardwareClock
    private let logger: Logger

    public init(board: Board, logger: Logger, clock: any HardwareClock = SystemHardwareClock()) {
        self.board = board
        self.clock = clock
        self.logger = logger
        inputLevels = Locked(Dictionary(board.inputs.map { ($0.name, false) }, uniquingKeysWith: { a, _ in a }))
        let channel = channel
        leds = LEDController(board: board, clock: clock, output: { _, _ in }, onDisplayedStateChange: { channel.send($0) })
        _ = stopped.set()
        logger.info("simulated board '\(board.name)': button and LEDs are simulated")
    }

    public var events: AsyncStream<HardwareEvent> { channel.events }
    public var droppedEvents: Int { channel.droppedEvents }
    public var displayedStates: AsyncStream<DeviceState> { channel.states }
    public var displayedState: DeviceState { leds.displayedState }
    public var isButtonAvailable: Bool { true }
    public var unavailableReason: String? { nil }
    public var isMuted: Bool { muted.withLock { $0 } }

    /// Each LED's current level, by the names in the board file.
    public var ledLevels: [String: Bool] {
        Dictionary(uniqueKeysWithValues: zip(board.leds.map(\.name), leds.levels))
    }

    /// Injects a recognised gesture, as the button would after recognition.
    public func press(_ kind: ButtonGesture) {
        let now = clock.now()
        channel.send(.button(ButtonEvent(kind, pressedAt: now, recognizedAt: now)))
    }

    /// Moves the simulated mute switch.
    public func setMuteSwitch(_ on: Bool) {
        let changed = muted.withLock { value -> Bool in
            defer { value = on }
            return value != on
        }
        guard changed else { return }
        leds.setMuteSwitch(on)
        channel.send(.mute(on))
    }

    public func setState(_ state: DeviceState) { leds.setState(state) }

    public func showLevel(_ level: Int, of maximum: Int) { leds.showLevel(level, of: maximum) }

    /// Sets a named input's level; reports an edge when it changes. False
    /// when the board file names no such input.
    @discardableResult
    public func setInput(_ name: String, active: Bool) -> Bool {
        let change = inputLevels.withLock { levels -> Bool? in
            guard let old = levels[name] else { return nil }
            levels[name] = active
            return old != active
        }
        guard let change else { return false }
        if change { channel.send(.input(name: name, active: active)) }
        return true
    }

    /// Flips a named input (the console's `:input NAME`); its new level, or
    /// nil when the board file names no such input.
    public func toggleInput(_ name: String) -> Bool? {
        guard let level = inputLevels.withLock({ $0[name] }) else { return nil }
        setInput(name, active: !level)
        return !level
    }

    /// The named inputs and their levels.
    public var inputs: [String: Bool] { inputLevels.withLock { $0 } }

    public func shutdown() {
        guard stopped.clear() else { return }
        leds.shutdown()
        channel.finish()
        // As GPIOBoard says it: the shutdown log shows the LEDs went off.
        logger.info("simulated board '\(board.name)': LEDs off")
    }

    deinit { shutdown() }
}
