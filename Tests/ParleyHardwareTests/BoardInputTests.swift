import ParleyDevice
import Foundation
import Logging
import Testing

@testable import ParleyHardware

/// Named input lines (`inputs:`): parsed, errors named, reported as edges by
/// the GPIO board (debounced) and the simulated board.
@Suite("Board inputs", .timeLimit(.minutes(3)))
struct BoardInputTests {
    @Test func inputsAreParsedWithTheirLines() throws {
        let yaml = validBoard + "\ninputs:\n  door: { line: 5, active: high, bias: pull-down }\n  window: { line: 6, active: low, bias: pull-up, debounce-ms: 50 }\n"
        let board = try Board.parse(yaml: yaml, file: "board/test/board.yaml")
        #expect(board.inputs == [
            NamedInput(name: "door", line: InputLine(line: 5, active: .high, bias: .pullDown, debounceMilliseconds: 30)),
            NamedInput(name: "window", line: InputLine(line: 6, active: .low, bias: .pullUp, debounceMilliseconds: 50)),
        ])
    }

    @Test func anInputOnALineAlreadyUsedIsRefusedNamingBoth() throws {
        let yaml = validBoard + "\ninputs:\n  door: { line: 17, active: high, bias: pull-down }\n"
        let error = try #require(parseError(yaml))
        #expect(error.problem == .lineUsedTwice(17, firstUse: "button.line", firstLine: 5))
        #expect(error.key == "inputs.door.line")
        #expect(error.line == 33)
    }

    @Test func aGPIOInputNeedsALineAndABadNameIsRefused() throws {
        let missing = try #require(parseError(validBoard + "\ninputs:\n  door: { active: high, bias: pull-down }\n"))
        #expect(missing.problem == .missingKey("line"))
        #expect(missing.key == "inputs.door.line")
        let badName = try #require(parseError(validBoard + "\ninputs:\n  front door: { line: 5, active: high, bias: as-is }\n"))
        #expect(badName.key == "inputs.front door")
        #expect(badName.description.contains("a name of letters, digits, - and _"))
    }

    @Test func theSimulatedBoardHasLinelessInputsThatToggle() async throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("sim"))
        #expect(board.inputs == [NamedInput(name: "door", line: nil), NamedInput(name: "motion", line: nil)])
        let simulated = SimulatedBoard(board: board, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, clock: ManualClock())
        #expect(simulated.toggleInput("door") == true)
        #expect(simulated.setInput("door", active: true))  // no change: no edge
        #expect(simulated.toggleInput("door") == false)
        #expect(simulated.toggleInput("garage") == nil)
        #expect(!simulated.setInput("garage", active: true))
        #expect(await firstEvents(simulated, 2) == [.input(name: "door", active: true), .input(name: "door", active: false)])
        simulated.shutdown()
    }

    @Test func aGPIOInputReportsDebouncedEdges() async throws {
        let h = GPIOHarness()
        let board = try h.open(gpioBoardYAML + "\ninputs:\n  door: { line: 5, active: high, bias: pull-down, debounce-ms: 30 }\n")
        let t0 = monotonicNow().adding(milliseconds: -2000)
        // A bouncy close (three edges within the debounce time), then an open.
        h.mock.sendEdges(5, [(true, t0), (false, t0.adding(milliseconds: 3)), (true, t0.adding(milliseconds: 6)),
                             (false, t0.adding(milliseconds: 1000))])
        #expect(await firstEvents(board, 2) == [.input(name: "door", active: true), .input(name: "door", active: false)])
        board.shutdown()
    }
}
