import ParleyDevice
import Foundation
import Testing

@testable import ParleyHardware

/// The package's board/ folder, found from this file's location.
let boardDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("board")

/// A valid board file; tests change one thing in it.
let validBoard = """
    name: test
    kind: gpio
    chip: gpiochip0
    button:
      line: 17
      active: low
      bias: pull-up
      debounce-ms: 20
      long-press-ms: 800
      double-press-ms: 350
      when-idle: suggestion
      double-press: shortcut:coffee time
    mute-switch:
      line: 27
      active: low
      bias: pull-up
    leds:
      blue: { line: 22 }
      amber: { line: 23, active: low }
    states:
      idle: off
      listening: { blue: on }
      thinking: { blue: pulse }
      speaking: { blue: on }
      awaiting-confirmation: { amber: blink }
      success: { blue: flash }
      error: { amber: flash }
      muted: { amber: on }
    audio:
      capture: "hw:0"
      playback: "hw:1"
    """

func parseError(_ yaml: String) -> BoardFileError? {
    do {
        _ = try Board.parse(yaml: yaml, file: "board/test/board.yaml")
        return nil
    } catch {
        return error
    }
}

@Suite("Board files")
struct BoardFileTests {
    @Test("every shipped board loads", arguments: ["pi3", "pi4", "pi5", "respeaker-2mic", "sim"])
    func shippedBoardsLoad(name: String) throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent(name))
        #expect(board.name == name)
        #expect(Set(board.states.keys) == Set(DeviceState.allCases))
        #expect(!board.audio.capture.isEmpty && !board.audio.playback.isEmpty)
        #expect(FileManager.default.fileExists(atPath: boardDirectory.appendingPathComponent("\(name)/README.md").path))
        if board.kind == .gpio {
            #expect(board.button.input != nil)
            #expect(board.leds.allSatisfy { $0.line != nil })
            #expect(!board.chips.isEmpty)
        }
    }

    @Test func pi5LooksUpTheRP1ChipByLabel() throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("pi5"))
        #expect(board.chips == ["pinctrl-rp1"])
    }

    @Test func respeakerUsesItsButtonAndSoundCard() throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("respeaker-2mic"))
        #expect(board.button.input?.line == 17)
        #expect(board.audio.capture.contains("seeed2micvoicec"))
        #expect(board.boot.configTxt.contains("dtoverlay=seeed-2mic-voicecard"))
    }

    @Test func validFileParsesEveryKey() throws {
        let board = try Board.parse(yaml: validBoard, file: "x.yaml")
        #expect(board.button.input == InputLine(line: 17, active: .low, bias: .pullUp, debounceMilliseconds: 20))
        #expect(board.button.timings == GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 350))
        #expect(board.button.whenIdle == .suggestion)
        #expect(board.button.doublePress == .runShortcut("coffee time"))
        #expect(board.muteSwitch?.line == 27)
        #expect(board.muteSwitch?.debounceMilliseconds == 30)
        #expect(board.leds == [LED(name: "blue", line: 22, active: .high), LED(name: "amber", line: 23, active: .low)])
        #expect(board.states[.idle] == [:])
        #expect(board.states[.awaitingConfirmation] == ["amber": .blink])
        #expect(board.audio == Audio(capture: "hw:0", playback: "hw:1"))
    }

    @Test func unknownKeyIsNamedWithItsLine() throws {
        let yaml = validBoard.replacingOccurrences(of: "  debounce-ms: 20", with: "  debounce_ms: 20")
        let error = try #require(parseError(yaml))
        #expect(error.line == 8)
        #expect(error.key == "button.debounce_ms")
        guard case .unknownKey("debounce_ms", let allowed) = error.problem else { Issue.record("\(error)"); return }
        #expect(allowed.contains("debounce-ms"))
        #expect(error.description.hasPrefix("board/test/board.yaml:8:3: button.debounce_ms: unknown key 'debounce_ms'"))
    }

    @Test func unknownStateIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "  thinking: { blue: pulse }", with: "  pondering: { blue: pulse }")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .unknownState("pondering"))
        #expect(error.line == 23)
        #expect(error.description.contains("the states are: idle, listening, thinking"))
    }

    @Test func sameLineTwiceNamesBothUses() throws {
        let yaml = validBoard.replacingOccurrences(of: "amber: { line: 23, active: low }", with: "amber: { line: 17, active: low }")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .lineUsedTwice(17, firstUse: "button.line", firstLine: 5))
        #expect(error.key == "leds.amber.line")
        #expect(error.line == 19)
        #expect(error.description.contains("line 17 is already used by button.line (line 5)"))
    }

    @Test func missingRequiredKeyIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "  active: low\n  bias: pull-up\n  debounce-ms: 20\n", with: "  bias: pull-up\n  debounce-ms: 20\n")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .missingKey("active"))
        #expect(error.key == "button.active")
        #expect(error.line == 5)  // the button mapping starts here
    }

    @Test func missingStateIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "  muted: { amber: on }\n", with: "")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .missingKey("muted"))
        #expect(error.key == "states")
    }

    @Test func wrongTypeIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "  long-press-ms: 800", with: "  long-press-ms: long")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .wrongType(expected: "a whole number", found: "'long'"))
        #expect(error.key == "button.long-press-ms")
        #expect(error.line == 9)
        #expect(error.column == 18)
    }

    @Test func sectionOfWrongTypeIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "audio:\n  capture: \"hw:0\"\n  playback: \"hw:1\"", with: "audio: [hw0, hw1]")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .wrongType(expected: "a mapping", found: "a list"))
        #expect(error.key == "audio")
    }

    @Test func unknownLEDInAStateIsNamed() throws {
        let yaml = validBoard.replacingOccurrences(of: "  speaking: { blue: on }", with: "  speaking: { green: on }")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .unknownLED("green", known: ["blue", "amber"]))
        #expect(error.key == "states.speaking.green")
    }

    @Test func invalidValuesAreNamed() throws {
        let pattern = try #require(parseError(validBoard.replacingOccurrences(of: "{ blue: pulse }", with: "{ blue: strobe }")))
        #expect(pattern.key == "states.thinking.blue")
        #expect(pattern.description.contains("invalid value 'strobe'; expected one of off, on, blink, pulse, flash"))

        let bias = try #require(parseError(validBoard.replacingOccurrences(of: "  bias: pull-up\n  debounce-ms", with: "  bias: up\n  debounce-ms")))
        #expect(bias.key == "button.bias")

        let range = try #require(parseError(validBoard.replacingOccurrences(of: "debounce-ms: 20", with: "debounce-ms: 5000")))
        #expect(range.problem == .invalidValue("5000", expected: "a number from 0 to 1000"))

        let action = try #require(parseError(validBoard.replacingOccurrences(of: "shortcut:coffee time", with: "dance")))
        #expect(action.key == "button.double-press")
    }

    @Test func lineOffsetsOutsideZeroTo1023AreRefused() throws {
        let button = try #require(parseError(validBoard.replacingOccurrences(of: "  line: 17\n", with: "  line: 1024\n")))
        #expect(button.key == "button.line")
        #expect(button.line == 5)
        #expect(button.problem == .invalidValue("1024", expected: "a number from 0 to 1023"))
        #expect(button.description.hasPrefix("board/test/board.yaml:5:"))
        #expect(button.description.contains("button.line: invalid value '1024'; expected a number from 0 to 1023"))

        let led = try #require(parseError(validBoard.replacingOccurrences(of: "blue: { line: 22 }", with: "blue: { line: -1 }")))
        #expect(led.key == "leds.blue.line")
        #expect(led.problem == .invalidValue("-1", expected: "a number from 0 to 1023"))

        // Both ends of the range are accepted.
        let low = try Board.parse(yaml: validBoard.replacingOccurrences(of: "blue: { line: 22 }", with: "blue: { line: 0 }"), file: "x.yaml")
        #expect(low.leds.first?.line == 0)
        let high = try Board.parse(yaml: validBoard.replacingOccurrences(of: "  line: 27\n", with: "  line: 1023\n"), file: "x.yaml")
        #expect(high.muteSwitch?.line == 1023)
    }

    @Test func yamlSyntaxErrorHasALine() throws {
        let error = try #require(parseError(validBoard.replacingOccurrences(of: "  capture: \"hw:0\"", with: "  capture: \"hw:0")))
        guard case .syntax = error.problem else { Issue.record("\(error)"); return }
        #expect(error.line != nil)
    }

    @Test func missingFileIsNamed() {
        let url = boardDirectory.appendingPathComponent("no-such-board")
        #expect(throws: BoardFileError.self) { try Board.load(from: url) }
        do {
            _ = try Board.load(from: url)
        } catch {
            #expect(error.problem == .unreadable("no such file"))
            #expect(error.file.hasSuffix("no-such-board"))
        }
    }

    @Test func simulatedBoardNeedsNoLines() throws {
        let board = try Board.load(from: boardDirectory.appendingPathComponent("sim"))
        #expect(board.kind == .simulated)
        #expect(board.button.input == nil)
        #expect(board.leds.map(\.name) == ["blue", "amber", "green", "red"])
    }

    @Test func gpioBoardNeedsAChip() throws {
        let error = try #require(parseError(validBoard.replacingOccurrences(of: "chip: gpiochip0\n", with: "")))
        #expect(error.problem == .missingKey("chip"))
    }
}

@Suite("Board detection")
struct BoardDetectionTests {
    @Test func modelsMapToTheirBoards() {
        #expect(Board.suggestedName(forModel: "Raspberry Pi 4 Model B Rev 1.4") == "pi4")
        #expect(Board.suggestedName(forModel: "Raspberry Pi 5 Model B Rev 1.0") == "pi5")
        #expect(Board.suggestedName(forModel: "Raspberry Pi 3 Model B Plus Rev 1.3") == "pi3")
        #expect(Board.suggestedName(forModel: "Raspberry Pi Zero 2 W Rev 1.0") == "sim")
        #expect(Board.suggestedName(forModel: nil) == "sim")
    }

    @Test func modelIsReadWithoutItsTrailingNUL() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-model-\(UUID().uuidString)")
        try Data("Raspberry Pi 4 Model B Rev 1.4\0".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(Board.machineModel(path: url.path) == "Raspberry Pi 4 Model B Rev 1.4")
        #expect(Board.machineModel(path: url.path + "-missing") == nil)
    }
}

/// Anchors, aliases and the caps: refused with the board file's place.
@Suite("Board file limits") struct BoardFileLimitsTests {
    @Test func anchorsAndAliasesAreRefused() {
        #expect(parseError("name: &n test\nbutton: *n\n")?.description
            == "board/test/board.yaml:1:7: an anchor (&n) is not accepted in a board file; write the value out in full")
        #expect(parseError("name: test\nbutton: *n\n")?.description
            == "board/test/board.yaml:2:9: an alias (*n) is not accepted in a board file; write the value out in full")
    }

    @Test func aBoardFilePastTheSizeLimitIsRefusedUnread() throws {
        let folder = NSTemporaryDirectory() + "parley-board-big-\(getpid())"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try ("name: test\n" + String(repeating: "#\n", count: 32 * 1024)).write(
            toFile: folder + "/board.yaml", atomically: true, encoding: .utf8)
        let error = #expect(throws: BoardFileError.self) { try Board.load(from: URL(fileURLWithPath: folder)) }
        #expect(error?.description == "\(folder)/board.yaml:1:1: is 65547 bytes; a board file may have at most 65536")
    }
}
