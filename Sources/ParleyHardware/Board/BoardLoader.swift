import ParleyDevice
import Foundation
import Yams

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
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: yaml) else {
                throw BoardFileError(file: file, line: 1, column: 1, key: "", problem: .wrongType(expected: "a mapping", found: "an empty document"))
            }
            root = node
        } catch let error as BoardFileError {
            throw error
        } catch {
            let (line, column, why) = describe(yamlError: error)
            throw BoardFileError(file: file, line: line, column: column, key: "", problem: .syntax(why))
        }
        return try BoardReader(file: file).board(from: root)
    }

    private static func describe(yamlError error: any Error) -> (Int?, Int?, String) {
        guard let yamlError = error as? YamlError else { return (nil, nil, "\(error)") }
        switch yamlError {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
            return (mark.line, mark.column, problem)
        case .composer(_, let problem, let mark, _):
            return (mark.line, mark.column, problem)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return (context.mark.line, context.mark.column, "duplicate key \(duplicates.joined(separator: ", "))")
        default:
            let firstLine = "\(yamlError)".split(separator: "\n").first.map(String.init) ?? "\(yamlError)"
            return (nil, nil, firstLine)
        }
    }
}

/// Walks the YAML node tree, checking each key against the schema.
/// Unknown keys are reported before missing ones, so a misspelt key is named as such.
private struct BoardReader {
    let file: String

    func error(_ node: Node?, _ key: String, _ problem: BoardFileError.Problem) -> BoardFileError {
        BoardFileError(file: file, line: node?.mark?.line, column: node?.mark?.column, key: key, problem: problem)
    }

    // MARK: The document

    func board(from root: Node) throws(BoardFileError) -> Board {
        let top = try mapping(root, "", allowed: [
            "name", "description", "kind", "chip", "button", "mute-switch", "leds", "led-timing", "states", "audio", "boot",
            "inputs",
        ])
        let name = try top.string("name")
        let description = try top.optionalString("description") ?? name
        let kind = try top.enumValue("kind", Board.Kind.self)
        var chips: [String] = []
        if kind == .gpio {
            chips = try top.stringOrList("chip")
        } else if top.has("chip") {
            chips = try top.stringOrList("chip")
        }
        var lines = LineRegistry()
        let button = try buttonSettings(top.required("button"), kind: kind, lines: &lines)
        let mute = try top.optional("mute-switch").map { node throws(BoardFileError) in
            try inputLine(node, "mute-switch", kind: kind, lines: &lines, defaultDebounce: 30)
        } ?? nil
        let leds = try ledList(top.required("leds"), kind: kind, lines: &lines)
        let inputs = try top.optional("inputs").map { node throws(BoardFileError) in
            try inputList(node, kind: kind, lines: &lines)
        } ?? []
        let timing = try top.optional("led-timing").map { node throws(BoardFileError) in try ledTiming(node) } ?? LEDTiming()
        let states = try stateTable(top.required("states"), leds: leds)
        let audio = try audioDevices(top.required("audio"))
        let boot = try top.optional("boot").map { node throws(BoardFileError) in try bootSettings(node) } ?? Boot()
        return Board(
            name: name, description: description, kind: kind, chips: chips, button: button, muteSwitch: mute,
            leds: leds, ledTiming: timing, states: states, audio: audio, boot: boot, inputs: inputs, file: file)
    }

    // MARK: Sections

    func buttonSettings(_ node: Node, kind: Board.Kind, lines: inout LineRegistry) throws(BoardFileError) -> ButtonSettings {
        let map = try mapping(node, "button", allowed: [
            "line", "active", "bias", "debounce-ms", "long-press-ms", "double-press-ms", "when-idle", "double-press",
        ])
        let input = try inputLine(node, "button", kind: kind, lines: &lines, defaultDebounce: 20, checkKeys: false)
        let debounce = try map.optionalInt("debounce-ms", in: 0...1000) ?? 20
        let timings = GestureTimings(
            debounceMilliseconds: debounce,
            longPressMilliseconds: try map.optionalInt("long-press-ms", in: 200...10_000) ?? 800,
            doublePressWindowMilliseconds: try map.optionalInt("double-press-ms", in: 0...2000) ?? 350)
        let whenIdle = try map.optionalEnum("when-idle", IdleButtonAction.self) ?? .pushToTalk
        var doublePress = DoublePressAction.none
        if let node = map.optional("double-press") {
            let value = try scalarString(node, "button.double-press")
            guard let action = DoublePressAction(boardValue: value) else {
                throw error(node, "button.double-press", .invalidValue(value, expected: DoublePressAction.boardSpellings))
            }
            doublePress = action
        }
        return ButtonSettings(input: input, timings: timings, whenIdle: whenIdle, doublePress: doublePress)
    }

    /// An input line section (button or mute switch). On a simulated board the line keys are optional.
    func inputLine(
        _ node: Node, _ path: String, kind: Board.Kind, lines: inout LineRegistry, defaultDebounce: Int, checkKeys: Bool = true
    ) throws(BoardFileError) -> InputLine? {
        let map = try mapping(node, path, allowed: checkKeys ? ["line", "active", "bias", "debounce-ms"] : nil)
        if kind == .simulated && !map.has("line") { return nil }
        let line = try map.lineOffset("line")
        try lines.claim(line, by: "\(path).line", node: map.optional("line"), reader: self)
        return InputLine(
            line: line,
            active: try map.enumValue("active", ActiveLevel.self),
            bias: try map.enumValue("bias", Bias.self),
            debounceMilliseconds: try map.optionalInt("debounce-ms", in: 0...1000) ?? defaultDebounce)
    }

    /// `inputs:` maps a name (as shortcut `input:` triggers use it) to a line
    /// section like the mute switch's; a simulated board's lines are optional.
    func inputList(_ node: Node, kind: Board.Kind, lines: inout LineRegistry) throws(BoardFileError) -> [NamedInput] {
        let map = try mapping(node, "inputs", allowed: nil)
        var inputs: [NamedInput] = []
        for (keyNode, valueNode) in map.pairs {
            let name = try scalarString(keyNode, "inputs")
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
                throw error(keyNode, "inputs.\(name)", .invalidValue(name, expected: "a name of letters, digits, - and _"))
            }
            let path = "inputs.\(name)"
            // `door:` or `door: {}` on a simulated board: a line toggled by hand.
            let empty = (valueNode.mapping?.isEmpty ?? false) || (valueNode.scalar.map { ["", "~", "null"].contains($0.string) } ?? false)
            if kind == .simulated, empty {
                inputs.append(NamedInput(name: name, line: nil))
                continue
            }
            let line = try inputLine(valueNode, path, kind: kind, lines: &lines, defaultDebounce: 30)
            inputs.append(NamedInput(name: name, line: line))
        }
        return inputs
    }

    func ledList(_ node: Node, kind: Board.Kind, lines: inout LineRegistry) throws(BoardFileError) -> [LED] {
        let map = try mapping(node, "leds", allowed: nil)
        guard !map.pairs.isEmpty else {
            throw error(node, "leds", .wrongType(expected: "at least one LED", found: "an empty mapping"))
        }
        var leds: [LED] = []
        for (keyNode, valueNode) in map.pairs {
            let name = try scalarString(keyNode, "leds")
            let path = "leds.\(name)"
            let led = try mapping(valueNode, path, allowed: ["line", "active"])
            var line: UInt32?
            if kind == .gpio || led.has("line") {
                let offset = try led.lineOffset("line")
                try lines.claim(offset, by: "\(path).line", node: led.optional("line"), reader: self)
                line = offset
            }
            let active = try led.optionalEnum("active", ActiveLevel.self) ?? .high
            leds.append(LED(name: name, line: line, active: active))
        }
        return leds
    }

    func ledTiming(_ node: Node) throws(BoardFileError) -> LEDTiming {
        let map = try mapping(node, "led-timing", allowed: ["blink-ms", "pulse-ms", "pwm-hz", "flash-ms"])
        let defaults = LEDTiming()
        return LEDTiming(
            blinkMilliseconds: try map.optionalInt("blink-ms", in: 40...10_000) ?? defaults.blinkMilliseconds,
            pulseMilliseconds: try map.optionalInt("pulse-ms", in: 200...20_000) ?? defaults.pulseMilliseconds,
            pwmHertz: try map.optionalInt("pwm-hz", in: 0...1000) ?? defaults.pwmHertz,
            flashMilliseconds: try map.optionalInt("flash-ms", in: 20...10_000) ?? defaults.flashMilliseconds)
    }

    func stateTable(_ node: Node, leds: [LED]) throws(BoardFileError) -> [DeviceState: [String: LEDPattern]] {
        let map = try mapping(node, "states", allowed: nil)
        let ledNames = leds.map(\.name)
        var table: [DeviceState: [String: LEDPattern]] = [:]
        for (keyNode, valueNode) in map.pairs {
            let stateName = try scalarString(keyNode, "states")
            guard let state = DeviceState(rawValue: stateName) else {
                throw error(keyNode, "states.\(stateName)", .unknownState(stateName))
            }
            let path = "states.\(stateName)"
            var patterns: [String: LEDPattern] = [:]
            // `idle: off` is shorthand for "every LED off".
            if case .scalar = valueNode, valueNode.string == "off" {
                table[state] = [:]
                continue
            }
            let stateMap = try mapping(valueNode, path, allowed: nil)
            for (ledNode, patternNode) in stateMap.pairs {
                let led = try scalarString(ledNode, path)
                guard ledNames.contains(led) else {
                    throw error(ledNode, "\(path).\(led)", .unknownLED(led, known: ledNames))
                }
                let value = try scalarString(patternNode, "\(path).\(led)")
                guard let pattern = LEDPattern(rawValue: value) else {
                    let expected = LEDPattern.allCases.map(\.rawValue).joined(separator: ", ")
                    throw error(patternNode, "\(path).\(led)", .invalidValue(value, expected: "one of \(expected)"))
                }
                patterns[led] = pattern
            }
            table[state] = patterns
        }
        for state in DeviceState.allCases where table[state] == nil {
            throw error(node, "states", .missingKey(state.rawValue))
        }
        return table
    }

    func audioDevices(_ node: Node) throws(BoardFileError) -> Audio {
        let map = try mapping(node, "audio", allowed: ["capture", "playback"])
        return Audio(capture: try map.string("capture"), playback: try map.string("playback"))
    }

    func bootSettings(_ node: Node) throws(BoardFileError) -> Boot {
        let map = try mapping(node, "boot", allowed: ["config-txt", "packages"])
        return Boot(
            configTxt: try map.optional("config-txt").map { node throws(BoardFileError) in try stringList(node, "boot.config-txt") } ?? [],
            packages: try map.optional("packages").map { node throws(BoardFileError) in try stringList(node, "boot.packages") } ?? [])
    }

    // MARK: Typed access

    func mapping(_ node: Node, _ path: String, allowed: [String]?) throws(BoardFileError) -> MappingReader {
        guard let map = node.mapping else {
            throw error(node, path, .wrongType(expected: "a mapping", found: Self.kindName(node)))
        }
        let reader = MappingReader(node: node, pairs: Array(map), path: path, reader: self)
        if let allowed {
            for (key, _) in reader.pairs {
                let name = key.string ?? "?"
                if !allowed.contains(name) {
                    throw error(key, reader.child(name), .unknownKey(name, allowed: allowed))
                }
            }
        }
        return reader
    }

    func scalarString(_ node: Node, _ path: String) throws(BoardFileError) -> String {
        guard case .scalar(let scalar) = node else {
            throw error(node, path, .wrongType(expected: "a text value", found: Self.kindName(node)))
        }
        return scalar.string
    }

    func stringList(_ node: Node, _ path: String) throws(BoardFileError) -> [String] {
        guard let sequence = node.sequence else {
            throw error(node, path, .wrongType(expected: "a list of text values", found: Self.kindName(node)))
        }
        var values: [String] = []
        for item in sequence { values.append(try scalarString(item, path)) }
        return values
    }

    static func kindName(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar): return "'\(scalar.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }
}

/// One mapping being read, with its dotted path for messages.
private struct MappingReader {
    let node: Node
    let pairs: [(key: Node, value: Node)]
    let path: String
    let reader: BoardReader

    func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func has(_ key: String) -> Bool { optional(key) != nil }

    func optional(_ key: String) -> Node? { pairs.first { $0.key.string == key }?.value }

    func required(_ key: String) throws(BoardFileError) -> Node {
        guard let value = optional(key) else { throw reader.error(node, child(key), .missingKey(key)) }
        return value
    }

    func string(_ key: String) throws(BoardFileError) -> String {
        try reader.scalarString(required(key), child(key))
    }

    func optionalString(_ key: String) throws(BoardFileError) -> String? {
        guard let node = optional(key) else { return nil }
        return try reader.scalarString(node, child(key))
    }

    func stringOrList(_ key: String) throws(BoardFileError) -> [String] {
        let node = try required(key)
        if node.sequence != nil {
            let list = try reader.stringList(node, child(key))
            guard !list.isEmpty else { throw reader.error(node, child(key), .wrongType(expected: "at least one chip", found: "an empty list")) }
            return list
        }
        return [try reader.scalarString(node, child(key))]
    }

    func int(_ node: Node, _ key: String, in range: ClosedRange<Int>) throws(BoardFileError) -> Int {
        guard case .scalar(let scalar) = node, scalar.style == .plain, let value = Int(scalar.string) else {
            throw reader.error(node, child(key), .wrongType(expected: "a whole number", found: BoardReader.kindName(node)))
        }
        guard range.contains(value) else {
            throw reader.error(node, child(key), .invalidValue(scalar.string, expected: "a number from \(range.lowerBound) to \(range.upperBound)"))
        }
        return value
    }

    func optionalInt(_ key: String, in range: ClosedRange<Int>) throws(BoardFileError) -> Int? {
        guard let node = optional(key) else { return nil }
        return try int(node, key, in: range)
    }

    func lineOffset(_ key: String) throws(BoardFileError) -> UInt32 {
        UInt32(try int(required(key), key, in: 0...1023))
    }

    func enumValue<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(BoardFileError) -> E where E.RawValue == String {
        let node = try required(key)
        return try enumValue(node, key, type)
    }

    func optionalEnum<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type) throws(BoardFileError) -> E? where E.RawValue == String {
        guard let node = optional(key) else { return nil }
        return try enumValue(node, key, type)
    }

    private func enumValue<E: RawRepresentable & CaseIterable>(_ node: Node, _ key: String, _ type: E.Type) throws(BoardFileError) -> E where E.RawValue == String {
        let value = try reader.scalarString(node, child(key))
        guard let parsed = E(rawValue: value) else {
            let expected = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.error(node, child(key), .invalidValue(value, expected: "one of \(expected)"))
        }
        return parsed
    }
}

/// Remembers which key claimed each line offset, so a second use names the first.
private struct LineRegistry {
    private var owners: [UInt32: (key: String, line: Int?)] = [:]

    mutating func claim(_ offset: UInt32, by key: String, node: Node?, reader: BoardReader) throws(BoardFileError) {
        if let first = owners[offset] {
            throw reader.error(node, key, .lineUsedTwice(offset, firstUse: first.key, firstLine: first.line))
        }
        owners[offset] = (key, node?.mark?.line)
    }
}
