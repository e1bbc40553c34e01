import ParleyDevice
import Foundation
import ParleyYAML

extension Board {
    /// The file inside a board folder.
    public static let fileName = "board.yaml"

    /// Loads and validates a board file. `url` is either a board folder
    /// (`board/pi4`, which holds `board.yaml`) or the file itself.
    ///
    /// Throws `BoardFileError` naming the file, line, key and problem.
    public static func load(from url: URL) throws(BoardFileError) -> Board {
        var file = url
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            file = url.appendingPathComponent(fileName)
        }
        // The size is checked before reading, so a huge file costs no memory.
        if let error = YAMLDocument.sizeError(file: file.path, limits: .board) { throw BoardFileError(error) }
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            let why = FileManager.default.fileExists(atPath: file.path) ? "not UTF-8 text or unreadable" : "no such file"
            throw BoardFileError(file: file.path, line: nil, column: nil, key: "", problem: .unreadable(why))
        }
        return try parse(yaml: text, file: file.path)
    }

    /// Parses and validates board-file text; `file` names it in errors.
    public static func parse(yaml: String, file: String) throws(BoardFileError) -> Board {
        do {
            guard let root = try YAMLDocument.parse(yaml, file: file, limits: .board) else {
                throw BoardFileError(file: file, line: 1, column: 1, key: "", problem: .wrongType(expected: "a mapping", found: "an empty document"))
            }
            return try BoardReader(file: file).board(from: root)
        } catch let error as BoardFileError {
            throw error
        } catch let error as YAMLError {
            throw BoardFileError(error)
        } catch {
            throw BoardFileError(file: file, line: nil, column: nil, key: "", problem: .syntax("\(error)"))
        }
    }
}

extension BoardFileError {
    /// ParleyYAML's error as a board file's: the same place and key path.
    init(_ error: YAMLError) {
        var key = error.path
        let problem: Problem
        switch error.problem {
        case .syntax(let why): problem = .syntax(why)
        case .unknownKey(let name, _, let allowed, _): problem = .unknownKey(name, allowed: allowed)
        case .missingKey(let name, let under):
            key = key.isEmpty ? name : "\(key).\(name)"
            problem = under.map { .misplacedKey(name, under: $0) } ?? .missingKey(name)
        case .wrongType(let expected, let found): problem = .wrongType(expected: expected, found: found)
        case .invalidValue(let value, let expected): problem = .invalidValue(value, expected: expected)
        case .other(let reason): problem = .invalidValue(reason, expected: "")
        case .refused(let reason): problem = .refused(reason)
        }
        self.init(file: error.location.file, line: error.location.line, column: error.location.column, key: key, problem: problem)
    }
}

/// Walks the YAML node tree, checking each key against the schema.
/// Unknown keys are reported before missing ones, so a misspelt key is named as such.
/// Reads throw ParleyYAML's errors and the board's own (`BoardFileError`:
/// unknown states and LEDs, a line used twice); `Board.parse` gives both as
/// `BoardFileError`.
private struct BoardReader {
    let file: String

    func error(_ node: YAMLNode, _ problem: BoardFileError.Problem, key: String? = nil) -> BoardFileError {
        BoardFileError(file: file, line: node.location.line, column: node.location.column, key: key ?? node.path, problem: problem)
    }

    // MARK: The document

    func board(from root: YAMLNode) throws -> Board {
        let top = try root.mapping(allowed: [
            "name", "description", "kind", "chip", "button", "mute-switch", "leds", "led-timing", "states", "audio", "boot",
            "inputs", "volume-buttons",
        ])
        let name = try top.required("name").string()
        let description = try top.optional("description")?.string() ?? name
        let kind = try top.required("kind").oneOf(Board.Kind.self)
        var chips: [String] = []
        if kind == .gpio || top.has("chip") {
            chips = try stringOrList(top.required("chip"))
        }
        var lines = LineRegistry()
        let button = try buttonSettings(top.required("button"), kind: kind, lines: &lines)
        let mute = try top.optional("mute-switch").flatMap { try inputLine($0, kind: kind, lines: &lines, defaultDebounce: 30) }
        let leds = try ledList(top.required("leds"), kind: kind, lines: &lines)
        let inputs = try top.optional("inputs").map { try inputList($0, kind: kind, lines: &lines) } ?? []
        let volumeButtons = try top.optional("volume-buttons").map { try volumeButtonLines($0, kind: kind, lines: &lines) }
        let timing = try top.optional("led-timing").map(ledTiming) ?? LEDTiming()
        let states = try stateTable(top.required("states"), leds: leds)
        let audio = try top.required("audio").mapping(allowed: ["capture", "playback", "mixer-control", "mixer-card"])
        let boot = try top.optional("boot").map(bootSettings) ?? Boot()
        return Board(
            name: name, description: description, kind: kind, chips: chips, button: button, muteSwitch: mute,
            leds: leds, ledTiming: timing, states: states,
            audio: Audio(capture: try audio.required("capture").string(), playback: try audio.required("playback").string(),
                         mixerControl: try audio.optional("mixer-control")?.string(),
                         mixerCard: try audio.optional("mixer-card")?.string()),
            boot: boot, inputs: inputs, volumeButtons: volumeButtons, file: file)
    }

    // MARK: Sections

    func buttonSettings(_ node: YAMLNode, kind: Board.Kind, lines: inout LineRegistry) throws -> ButtonSettings {
        let map = try node.mapping(allowed: [
            "line", "active", "bias", "debounce-ms", "long-press-ms", "double-press-ms", "when-idle", "double-press",
        ])
        let input = try inputLine(node, kind: kind, lines: &lines, defaultDebounce: 20, checkKeys: false)
        let timings = GestureTimings(
            debounceMilliseconds: try map.optional("debounce-ms")?.int(in: 0...1000) ?? 20,
            longPressMilliseconds: try map.optional("long-press-ms")?.int(in: 200...10_000) ?? 800,
            doublePressWindowMilliseconds: try map.optional("double-press-ms")?.int(in: 0...2000) ?? 350)
        let whenIdle = try map.optional("when-idle")?.oneOf(IdleButtonAction.self) ?? .pushToTalk
        var doublePress = DoublePressAction.none
        if let node = map.optional("double-press") {
            let value = try node.string()
            guard let action = DoublePressAction(boardValue: value) else {
                throw error(node, .invalidValue(value, expected: DoublePressAction.boardSpellings))
            }
            doublePress = action
        }
        return ButtonSettings(input: input, timings: timings, whenIdle: whenIdle, doublePress: doublePress)
    }

    /// An input line section (button or mute switch). On a simulated board the line keys are optional.
    func inputLine(
        _ node: YAMLNode, kind: Board.Kind, lines: inout LineRegistry, defaultDebounce: Int, checkKeys: Bool = true
    ) throws -> InputLine? {
        let map = try node.mapping(allowed: checkKeys ? ["line", "active", "bias", "debounce-ms"] : nil)
        if kind == .simulated && !map.has("line") { return nil }
        let lineNode = try map.required("line")
        let line = UInt32(try lineNode.int(in: 0...1023))
        try lines.claim(line, by: lineNode, reader: self)
        return InputLine(
            line: line,
            active: try map.required("active").oneOf(ActiveLevel.self),
            bias: try map.required("bias").oneOf(Bias.self),
            debounceMilliseconds: try map.optional("debounce-ms")?.int(in: 0...1000) ?? defaultDebounce)
    }

    /// `inputs:` maps a name (as shortcut `input:` triggers use it) to a line
    /// section like the mute switch's; a simulated board's lines are optional.
    func inputList(_ node: YAMLNode, kind: Board.Kind, lines: inout LineRegistry) throws -> [NamedInput] {
        var inputs: [NamedInput] = []
        for (keyNode, valueNode) in try node.mapping().entries {
            let name = try keyNode.string()
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw error(keyNode, .invalidValue(name, expected: "a name of letters, digits, - and _"))
            }
            // `door:` or `door: {}` on a simulated board: a line toggled by hand.
            if kind == .simulated, valueNode.isEmpty {
                inputs.append(NamedInput(name: name, line: nil))
                continue
            }
            inputs.append(NamedInput(name: name, line: try inputLine(valueNode, kind: kind, lines: &lines, defaultDebounce: 30)))
        }
        return inputs
    }

    /// `volume-buttons:` with `up:` and `down:` line sections (each optional,
    /// at least one); on a simulated board the lines are optional.
    func volumeButtonLines(_ node: YAMLNode, kind: Board.Kind, lines: inout LineRegistry) throws -> VolumeButtons {
        let map = try node.mapping(allowed: ["up", "down"])
        guard map.has("up") || map.has("down") else {
            throw error(node, .wrongType(expected: "`up:` and/or `down:` button lines", found: "neither"))
        }
        func line(_ key: String) throws -> InputLine? {
            guard let section = map.optional(key) else { return nil }
            if kind == .simulated, section.isEmpty { return nil }
            return try inputLine(section, kind: kind, lines: &lines, defaultDebounce: 20)
        }
        return VolumeButtons(up: try line("up"), down: try line("down"))
    }

    func ledList(_ node: YAMLNode, kind: Board.Kind, lines: inout LineRegistry) throws -> [LED] {
        let map = try node.mapping()
        guard !map.isEmpty else { throw error(node, .wrongType(expected: "at least one LED", found: "an empty mapping")) }
        var leds: [LED] = []
        for (keyNode, valueNode) in map.entries {
            let name = try keyNode.string()
            let led = try valueNode.mapping(allowed: ["line", "active"])
            var line: UInt32?
            if kind == .gpio || led.has("line") {
                let lineNode = try led.required("line")
                let offset = UInt32(try lineNode.int(in: 0...1023))
                try lines.claim(offset, by: lineNode, reader: self)
                line = offset
            }
            let active = try led.optional("active")?.oneOf(ActiveLevel.self) ?? .high
            leds.append(LED(name: name, line: line, active: active))
        }
        return leds
    }

    func ledTiming(_ node: YAMLNode) throws -> LEDTiming {
        let map = try node.mapping(allowed: ["blink-ms", "pulse-ms", "pwm-hz", "flash-ms"])
        let defaults = LEDTiming()
        return LEDTiming(
            blinkMilliseconds: try map.optional("blink-ms")?.int(in: 40...10_000) ?? defaults.blinkMilliseconds,
            pulseMilliseconds: try map.optional("pulse-ms")?.int(in: 200...20_000) ?? defaults.pulseMilliseconds,
            pwmHertz: try map.optional("pwm-hz")?.int(in: 0...1000) ?? defaults.pwmHertz,
            flashMilliseconds: try map.optional("flash-ms")?.int(in: 20...10_000) ?? defaults.flashMilliseconds)
    }

    func stateTable(_ node: YAMLNode, leds: [LED]) throws -> [DeviceState: [String: LEDPattern]] {
        let ledNames = leds.map(\.name)
        var table: [DeviceState: [String: LEDPattern]] = [:]
        for (keyNode, valueNode) in try node.mapping().entries {
            let stateName = try keyNode.string()
            guard let state = DeviceState(rawValue: stateName) else { throw error(keyNode, .unknownState(stateName)) }
            // `idle: off` is shorthand for "every LED off".
            if valueNode.text == "off" {
                table[state] = [:]
                continue
            }
            var patterns: [String: LEDPattern] = [:]
            for (ledNode, patternNode) in try valueNode.mapping().entries {
                let led = try ledNode.string()
                guard ledNames.contains(led) else { throw error(ledNode, .unknownLED(led, known: ledNames)) }
                patterns[led] = try patternNode.oneOf(LEDPattern.self)
            }
            table[state] = patterns
        }
        for state in DeviceState.allCases where table[state] == nil {
            throw error(node, .missingKey(state.rawValue))
        }
        return table
    }

    func bootSettings(_ node: YAMLNode) throws -> Boot {
        let map = try node.mapping(allowed: ["config-txt", "packages"])
        return Boot(
            configTxt: try map.optional("config-txt")?.stringList() ?? [],
            packages: try map.optional("packages")?.stringList() ?? [])
    }

    /// `chip: gpiochip0` or a list of at least one chip.
    func stringOrList(_ node: YAMLNode) throws -> [String] {
        guard node.isList else { return [try node.string()] }
        let list = try node.stringList()
        guard !list.isEmpty else { throw error(node, .wrongType(expected: "at least one chip", found: "an empty list")) }
        return list
    }
}

/// Remembers which key claimed each line offset, so a second use names the first.
private struct LineRegistry {
    private var owners: [UInt32: (key: String, line: Int)] = [:]

    mutating func claim(_ offset: UInt32, by node: YAMLNode, reader: BoardReader) throws {
        if let first = owners[offset] {
            throw reader.error(node, .lineUsedTwice(offset, firstUse: first.key, firstLine: first.line))
        }
        owners[offset] = (node.path, node.location.line)
    }
}
