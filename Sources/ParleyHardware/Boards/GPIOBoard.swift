import ParleyDevice
import Logging
import Synchronization

/// The board on real GPIO through libgpiod (v1 or v2): the button and mute switch on
/// a watcher thread, the LEDs as output lines driven by `LEDController`.
///
/// It always starts. When the chip or a line cannot be had (ENOENT, EBUSY,
/// EACCES), it says why on the log, runs without that part, and reports
/// `isButtonAvailable == false` when the button is the missing part.
public final class GPIOBoard: HardwareBoard {
    /// The C handles, dropped together on shutdown: releasing the lines and
    /// then the last reference to the chip closes it (`gpiod_chip_close`).
    private struct Resources {
        var chip: GPIOChip?
        var ledLines: [RequestedLine?]
        var watcher: EdgeWatcher?
    }

    public let board: Board
    public let isButtonAvailable: Bool
    public let unavailableReason: String?
    private let channel = HardwareEventChannel()
    private let leds: LEDController
    private let muted: Locked<Bool>
    private let resources: Locked<Resources?>
    private let stopped = ManagedFlag()
    private let logger: Logger

    public convenience init(board: Board, logger: Logger) {
        self.init(board: board, logger: logger, clock: SystemHardwareClock(), functions: .system)
    }

    init(board: Board, logger: Logger, clock: any HardwareClock, functions: GPIODFunctions) {
        self.board = board
        self.logger = logger
        var reason: String?
        var chip: GPIOChip?
        var ledLines: [RequestedLine?] = Array(repeating: nil, count: board.leds.count)
        var inputs: [EdgeWatcher.Input] = []
        var initiallyMuted = false

        // Where a problem comes from, as the person fixing the board file needs
        // it: "board 'pi4' (/etc/parley/board/pi4/board.yaml, leds.red.line)".
        func origin(_ key: String) -> String { "board '\(board.name)' (\(board.file), \(key))" }

        switch GPIOChip.open(candidates: board.chips, functions: functions) {
        case .failure(let error):
            reason = "GPIO chip not available: \(error)"
            logger.error("""
                \(origin("chip")): \(error). Starting without the button and LEDs; \
                confirmations that need the button will be refused aloud.
                """)
        case .success(let opened):
            chip = opened
            logger.info("board '\(board.name)': GPIO chip \(opened.name) [\(opened.label)]")
            for (index, led) in board.leds.enumerated() {
                guard let offset = led.line else { continue }
                switch opened.requestOutput(offset: offset, flags: LineRequestFlags(active: led.active, bias: .asIs)) {
                case .success(let line): ledLines[index] = line
                case .failure(let error): logger.error("\(origin("leds.\(led.name).line")): LED '\(led.name)' unavailable: \(error)")
                }
            }
            if let input = board.button.input {
                switch Self.requestInput(opened, input) {
                case .success(let (line, active)):
                    inputs.append(EdgeWatcher.Input(line: line, role: .button(board.button), initiallyActive: active))
                case .failure(let error):
                    reason = "button unavailable (\(board.file), button.line): \(error)"
                    logger.error("\(origin("button.line")): button unavailable: \(error); confirmations that need it will be refused aloud")
                }
            } else {
                reason = "the board file gives no button line"
            }
            if let input = board.muteSwitch {
                switch Self.requestInput(opened, input) {
                case .success(let (line, active)):
                    inputs.append(EdgeWatcher.Input(line: line, role: .muteSwitch(input), initiallyActive: active))
                    initiallyMuted = active
                case .failure(let error):
                    logger.error("\(origin("mute-switch.line")): mute switch unavailable: \(error)")
                }
            }
            let volumeLines: [(ButtonGesture, String, InputLine?)] = [
                (.volumeUp, "up", board.volumeButtons?.up), (.volumeDown, "down", board.volumeButtons?.down),
            ]
            for case let (gesture, key, input?) in volumeLines {
                switch Self.requestInput(opened, input) {
                case .success(let (line, active)):
                    inputs.append(EdgeWatcher.Input(line: line, role: .volumeButton(gesture, input), initiallyActive: active))
                case .failure(let error):
                    logger.error("\(origin("volume-buttons.\(key).line")): volume button unavailable: \(error); the volume still follows voice and `parley volume`")
                }
            }
            for named in board.inputs {
                guard let input = named.line else { continue }
                switch Self.requestInput(opened, input) {
                case .success(let (line, active)):
                    inputs.append(EdgeWatcher.Input(line: line, role: .named(named.name, input), initiallyActive: active))
                case .failure(let error):
                    logger.error("\(origin("inputs.\(named.name).line")): input '\(named.name)' unavailable: \(error); its shortcut triggers will not fire")
                }
            }
        }

        isButtonAvailable = reason == nil
        unavailableReason = reason
        muted = Locked(initiallyMuted)
        let resources = Locked<Resources?>(Resources(chip: chip, ledLines: ledLines, watcher: nil))
        self.resources = resources
        let channel = channel
        let boardName = board.name
        // A failing LED is logged once, not at every PWM frame.
        let failedLEDs = Locked<Set<Int>>([])
        let leds = LEDController(
            board: board, clock: clock,
            output: { index, lit in
                guard let line = resources.withLock({ $0?.ledLines[index] }) else { return }
                if case .failure(let error) = line.set(lit), failedLEDs.withLock({ $0.insert(index).inserted }) {
                    logger.warning("board '\(boardName)': LED write failed: \(error)")
                }
            },
            onDisplayedStateChange: { channel.send($0) })
        self.leds = leds
        if initiallyMuted { leds.setMuteSwitch(true) }

        if !inputs.isEmpty {
            let muted = muted
            do {
                let watcher = try EdgeWatcher(functions: functions, inputs: inputs, logger: logger) { event in
                    if case .mute(let on) = event {
                        muted.withLock { $0 = on }
                        leds.setMuteSwitch(on)
                    }
                    channel.send(event)
                }
                resources.withLock { $0?.watcher = watcher }
                watcher.start()
            } catch {
                logger.error("board '\(board.name)': cannot watch GPIO inputs: \(error)")
            }
        }
        _ = stopped.set()
    }

    private static func requestInput(_ chip: GPIOChip, _ input: InputLine) -> Result<(RequestedLine, Bool), GPIOError> {
        chip.requestEdgeEvents(offset: input.line, flags: LineRequestFlags(active: input.active, bias: input.bias)).flatMap { line in
            line.value().map { (line, $0) }
        }
    }

    public var events: AsyncStream<HardwareEvent> { channel.events }
    public var droppedEvents: Int { channel.droppedEvents }
    public var displayedStates: AsyncStream<DeviceState> { channel.states }
    public var displayedState: DeviceState { leds.displayedState }
    public var isMuted: Bool { muted.withLock { $0 } }

    public func setState(_ state: DeviceState) { leds.setState(state) }

    public func showLevel(_ level: Int, of maximum: Int) { leds.showLevel(level, of: maximum) }

    public func shutdown() {
        guard stopped.clear() else { return }
        let watcher = resources.withLock { $0?.watcher }
        watcher?.stop()
        leds.shutdown()
        resources.withLock { $0 = nil }
        channel.finish()
        logger.info("board '\(board.name)': LEDs off, GPIO lines released")
    }

    deinit { shutdown() }
}
