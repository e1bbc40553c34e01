import Foundation
import Logging
import ParleyControl
import ParleyCore
import ParleyHardware
import ServiceLifecycle
import Synchronization

/// The board plugged into the daemon: gestures and the mute switch go to the
/// engine, the engine's states go to the LEDs; `parley press` goes through
/// the simulated board like a real press.
public final class BoardBridge: BoardPort, Service {
    public let hardware: any HardwareBoard
    private let engine: ConversationEngine
    private let logger: Logger
    /// Receives the named inputs' edges (name, true for rising): the shortcut triggers.
    private let onInput: (@Sendable (String, Bool) async -> Void)?
    /// Asked first at each short press; true takes the press (the page's
    /// button pairing), and the engine does not see it.
    private let pressTaker = Mutex<(@Sendable () async -> Bool)?>(nil)

    public init(hardware: any HardwareBoard, engine: ConversationEngine, logger: Logger,
                onInput: (@Sendable (String, Bool) async -> Void)? = nil) {
        self.hardware = hardware
        self.engine = engine
        self.logger = logger
        self.onInput = onInput
        if !hardware.isButtonAvailable {
            logger.error("button unavailable: \(hardware.unavailableReason ?? "unknown reason")")
        }
    }

    /// Lets `taker` take short presses before the engine (one taker; the last set wins).
    public func takeShortPresses(_ taker: @escaping @Sendable () async -> Bool) {
        pressTaker.withLock { $0 = taker }
    }

    /// Whether a press was taken before the engine.
    private func taken(_ gesture: ButtonGesture) async -> Bool {
        guard gesture == .press, let taker = pressTaker.withLock({ $0 }) else { return false }
        return await taker()
    }

    public func show(_ state: DeviceState) {
        hardware.setState(state)
    }

    public func simulate(_ press: ButtonPress) async throws {
        if let simulated = hardware as? SimulatedBoard {
            simulated.press(EngineBridge.gesture(press))
        } else {
            // Real GPIO: the press cannot be injected on the line; give it to the engine.
            let gesture = EngineBridge.gesture(press)
            if await taken(gesture) { return }
            await engine.button(gesture)
        }
    }

    public func allOff() async {
        hardware.shutdown()
    }

    public var ledState: String { hardware.displayedState.rawValue }

    public var buttonProblem: String? {
        hardware.isButtonAvailable ? nil : hardware.unavailableReason ?? "unknown reason"
    }

    /// Forwards board events to the engine until shutdown.
    public func run() async throws {
        await engine.setMuted(hardware.isMuted)
        await withGracefulShutdownHandler {
            for await event in hardware.events {
                switch event {
                case .button(let gesture):
                    logger.info("button", metadata: ["gesture": "\(gesture.kind.rawValue)"])
                    if await taken(gesture.kind) {
                        logger.info("button press taken for pairing a browser")
                        continue
                    }
                    await engine.button(gesture.kind)
                case .mute(let muted):
                    logger.notice(muted ? "muted" : "unmuted")
                    await engine.setMuted(muted)
                case .input(let name, let active):
                    logger.info("input", metadata: ["name": "\(name)", "edge": "\(active ? "rising" : "falling")"])
                    await onInput?(name, active)
                }
            }
        } onGracefulShutdown: { [hardware] in
            hardware.shutdown()  // finishes the event stream
        }
        // The stream also ends when the conversation stopper turned the LEDs
        // off first; a service must not return before its shutdown.
        try? await gracefulShutdown()
    }
}
