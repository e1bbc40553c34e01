import ParleyDevice
import Logging
import Testing

@testable import ParleyHardware

@Suite("Simulated board", .timeLimit(.minutes(3)))
struct SimulatedBoardTests {
    func open(clock: ManualClock = ManualClock()) throws -> SimulatedBoard {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("sim"))
        return SimulatedBoard(board: board, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, clock: clock)
    }

    @Test func boardFileOpensTheSimulatedBoard() throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("sim"))
        let opened = board.open(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        #expect(opened is SimulatedBoard)
        #expect(opened.isButtonAvailable)
        opened.shutdown()
    }

    @Test func injectedPressesArriveAsGestures() async throws {
        let clock = ManualClock(now: .milliseconds(42))
        let board = try open(clock: clock)
        board.press(.press)
        board.press(.doublePress)
        board.press(.longPress)
        let events = await firstEvents(board, 3)
        #expect(events.map { event -> ButtonGesture? in
            if case .button(let gesture) = event { return gesture.kind }
            return nil
        } == [.press, .doublePress, .longPress])
        #expect(events.first == .button(ButtonEvent(.press, pressedAt: .milliseconds(42), recognizedAt: .milliseconds(42))))
        board.shutdown()
    }

    @Test func ledStatesAreObservableAndQueryable() async throws {
        let clock = ManualClock()
        let board = try open(clock: clock)
        board.setState(.listening)
        #expect(board.displayedState == .listening)
        #expect(board.ledLevels == ["blue": true, "amber": false, "green": false, "red": false])
        board.setState(.success)
        #expect(board.ledLevels["green"] == true)
        clock.advance(byMilliseconds: 600)
        #expect(board.displayedState == .listening)
        #expect(board.ledLevels["green"] == false)
        board.shutdown()
        var states: [DeviceState] = []
        for await state in board.displayedStates { states.append(state) }
        #expect(states == [.listening, .success, .listening])
    }

    @Test func muteSwitchIsAnEventAndShowsMuted() async throws {
        let board = try open()
        board.setState(.listening)
        board.setMuteSwitch(true)
        board.setMuteSwitch(true)  // no change, no event
        #expect(board.isMuted)
        #expect(board.displayedState == .muted)
        #expect(board.ledLevels == ["blue": false, "amber": false, "green": false, "red": true])
        board.setMuteSwitch(false)
        #expect(await firstEvents(board, 2) == [.mute(true), .mute(false)])
        #expect(board.displayedState == .listening)
        board.shutdown()
    }

    @Test func shutdownTurnsTheLEDsOffAndFinishes() async throws {
        let board = try open()
        board.setState(.awaitingConfirmation)
        #expect(board.ledLevels["amber"] == true)
        board.shutdown()
        #expect(board.ledLevels.values.allSatisfy { !$0 })
        board.press(.press)  // after shutdown: dropped quietly
        var count = 0
        for await _ in board.events { count += 1 }
        #expect(count == 0)
    }

    @Test func eventBufferIsBoundedAndCountsDrops() throws {
        let board = try open()
        for _ in 0..<(HardwareEventChannel.bufferSize + 5) { board.press(.press) }
        #expect(board.droppedEvents == 5)
        board.shutdown()
    }
}
