import Foundation
import ParleyIntents
import ParleyYAML

/// Reads `manifest.yaml` of an app folder and checks everything that can be
/// checked in the file alone; `ManifestRegistration` then applies the rules
/// every app obeys. All problems are collected, each `FILE:LINE:COLUMN: reason`.
public enum ManifestLoader {
    /// Loads `<folder>/manifest.yaml`.
    public static func load(folder: URL) throws(ManifestErrors) -> AppManifest {
        let file = folder.appendingPathComponent(AppManifest.fileName)
        // The size is checked before reading, so a huge file costs no memory.
        if let error = YAMLDocument.sizeError(file: file.path, limits: .manifest) {
            throw ManifestErrors([ManifestError(error)])
        }
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw ManifestErrors([ManifestError(file: file.path, mark: SourceMark(line: 1, column: 1),
                reason: FileManager.default.fileExists(atPath: file.path) ? "cannot read the manifest" : "no manifest.yaml in the app folder")])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ManifestErrors([ManifestError(file: file.path, mark: SourceMark(line: 1, column: 1), reason: "the manifest is not UTF-8 text")])
        }
        return try parse(yaml: text, file: file.path, folder: folder)
    }

    /// Parses manifest text; `file` names it in errors, `folder` is where the handler runs.
    public static func parse(yaml: String, file: String, folder: URL) throws(ManifestErrors) -> AppManifest {
        let parsed: YAMLNode?
        do {
            parsed = try YAMLDocument.parse(yaml, file: file, limits: .manifest)
        } catch {
            throw ManifestErrors([ManifestError(error)])
        }
        guard let root = parsed else {
            throw ManifestErrors([ManifestError(file: file, mark: SourceMark(line: 1, column: 1), reason: "the manifest is empty")])
        }
        var reader = ManifestReader(file: file, folder: folder)
        let manifest = reader.manifest(root)
        if let manifest, reader.errors.isEmpty { return manifest }
        throw ManifestErrors(reader.errors.sorted { ($0.mark.line, $0.mark.column) < ($1.mark.line, $1.mark.column) })
    }
}

extension ManifestError {
    /// ParleyYAML's error, at its place, with its message.
    init(_ error: YAMLError) {
        self.init(file: error.location.file, mark: SourceMark(line: error.location.line, column: error.location.column), reason: error.message)
    }
}

/// Walks the node tree (ParleyYAML's located nodes), collecting errors rather
/// than stopping at the first.
struct ManifestReader {
    let file: String
    let folder: URL
    var errors: [ManifestError] = []

    /// Letters, digits and underscores, not starting with a digit (nor, for an identifier, an underscore).
    static func isIdentifier(_ text: String, leadingUnderscore: Bool) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII,
              first.properties.isAlphabetic || (leadingUnderscore && first == "_") else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    func mark(_ node: YAMLNode?) -> SourceMark {
        node.map { SourceMark(line: $0.location.line, column: $0.location.column) } ?? SourceMark(line: 1, column: 1)
    }

    mutating func error(_ node: YAMLNode?, _ reason: String) {
        errors.append(ManifestError(file: file, mark: mark(node), reason: reason))
    }

    // MARK: Shapes

    /// The keys of a mapping; unknown keys (with the closest allowed one) and
    /// missing required ones (or required ones written under another key) are errors.
    mutating func mapping(_ node: YAMLNode, _ path: String, allowed: [String], required: [String] = []) -> [String: YAMLNode]? {
        guard node.isMapping, let mapping = try? node.mapping() else {
            error(node, "\(path) must be a mapping with keys \(allowed.joined(separator: ", ")), not \(node.shape)")
            return nil
        }
        errors += mapping.unknownKeys(allowed: allowed, in: path).map(ManifestError.init)
        var keys: [String: YAMLNode] = [:]
        for (key, value) in mapping.entries where allowed.contains(key.text ?? "") { keys[key.text ?? ""] = value }
        for name in required where keys[name] == nil {
            if mapping.writtenUnder(name) != nil {
                errors.append(ManifestError(mapping.missing(name)))
            } else {
                error(node, "\(path) is missing the required key '\(name)'")
            }
        }
        return keys
    }

    mutating func string(_ node: YAMLNode?, _ path: String) -> String? {
        guard let node else { return nil }
        guard let text = node.text else {
            error(node, "\(path) must be a text, not \(node.shape)")
            return nil
        }
        return text
    }

    mutating func nonEmptyString(_ node: YAMLNode?, _ path: String) -> String? {
        guard let text = string(node, path) else { return nil }
        if text.trimmingCharacters(in: .whitespaces).isEmpty {
            error(node, "\(path) must not be empty")
            return nil
        }
        return text
    }

    mutating func sequence(_ node: YAMLNode?, _ path: String, example: String) -> [YAMLNode]? {
        guard let node else { return nil }
        guard node.isList, let items = try? node.list() else {
            error(node, "\(path) must be a list like \(example), not \(node.shape)")
            return nil
        }
        return items
    }

    mutating func stringList(_ node: YAMLNode?, _ path: String, example: String) -> [String]? {
        guard let items = sequence(node, path, example: example) else { return nil }
        var result: [String] = []
        for item in items {
            if let text = nonEmptyString(item, "each entry of \(path)") { result.append(text) }
        }
        return result
    }

    mutating func bool(_ node: YAMLNode?, _ path: String) -> Bool? {
        guard let text = string(node, path) else { return nil }
        switch text.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default:
            error(node, "\(path) must be true or false, not '\(text)'")
            return nil
        }
    }

    mutating func number(_ node: YAMLNode?, _ path: String, integer: Bool) -> Double? {
        guard let text = string(node, path) else { return nil }
        if integer, let value = Int(text) { return Double(value) }
        if !integer, let value = Double(text), value.isFinite { return value }
        error(node, "\(path) must be \(integer ? "a whole number" : "a number"), not '\(text)'")
        return nil
    }

    mutating func identifier(_ node: YAMLNode?, _ path: String) -> String? {
        guard let text = nonEmptyString(node, path) else { return nil }
        guard Self.isIdentifier(text, leadingUnderscore: false) else {
            error(node, "\(path) '\(text)' must be letters, digits and underscores, starting with a letter (it is written App.Intent in shortcut files)")
            return nil
        }
        return text
    }

    // MARK: The document

    mutating func manifest(_ root: YAMLNode) -> AppManifest? {
        guard let top = mapping(root, "the manifest", allowed: ["identifier", "name", "synonyms", "handler", "intents", "shortcuts"],
                                required: ["identifier", "name", "handler", "intents"]) else { return nil }
        let identifier = identifier(top["identifier"], "identifier")
        let name = nonEmptyString(top["name"], "name")
        if let name, PhraseText.normalise(name).isEmpty { error(top["name"], "name '\(name)' has no word that can be said") }
        let synonyms = stringList(top["synonyms"], "synonyms", example: "[the lights]") ?? []
        let handler = handlerArgv(top["handler"])
        var intents: [AppManifest.Intent] = []
        var seenIntents: [String: SourceMark] = [:]
        for node in sequence(top["intents"], "intents", example: "[{identifier: SetLight, title: Set a light}]") ?? [] {
            guard let intent = intent(node) else { continue }
            if let first = seenIntents[intent.identifier] {
                error(node, "the intent '\(intent.identifier)' is declared twice (first at line \(first.line))")
                continue
            }
            seenIntents[intent.identifier] = intent.mark
            intents.append(intent)
        }
        if top["intents"]?.node.sequence?.isEmpty == true { error(top["intents"], "intents must list at least one intent") }
        var shortcuts: [AppManifest.Shortcut] = []
        for node in sequence(top["shortcuts"], "shortcuts", example: "[{intent: SetLight, phrases: [\"use {app}\"]}]") ?? [] {
            if let shortcut = shortcut(node, intents: intents) { shortcuts.append(shortcut) }
        }
        guard let identifier, let name, let handler else { return nil }
        var marks: [String: SourceMark] = [:]
        for key in ["identifier", "name", "synonyms", "handler", "intents", "shortcuts"] where top[key] != nil {
            marks[key] = mark(top[key])
        }
        return AppManifest(identifier: identifier, name: name, synonyms: synonyms, handler: handler, intents: intents,
                           shortcuts: shortcuts, folder: folder, file: file, marks: marks)
    }

    /// The handler's argv; its program must exist: in the app folder when it
    /// contains a slash, otherwise on the PATH.
    mutating func handlerArgv(_ node: YAMLNode?) -> [String]? {
        guard let node else { return nil }
        guard let argv = stringList(node, "handler", example: "[python3, handler.py]") else { return nil }
        guard let program = argv.first else {
            error(node, "handler must name a program to run, e.g. [python3, handler.py]")
            return nil
        }
        if program.contains("/") {
            let path = program.hasPrefix("/") ? program : folder.appendingPathComponent(program).path
            if !FileManager.default.fileExists(atPath: path) {
                error(try? node.list().first, "the handler program '\(program)' does not exist in the app folder")
            } else if !FileManager.default.isExecutableFile(atPath: path) {
                error(try? node.list().first, "the handler program '\(program)' is not executable (chmod +x)")
            }
        } else if Self.findOnPath(program) == nil {
            error(try? node.list().first, "the handler program '\(program)' is not on the PATH; write ./\(program) for a program in the app folder")
        }
        return argv
    }

    static func findOnPath(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    mutating func intent(_ node: YAMLNode) -> AppManifest.Intent? {
        guard let keys = mapping(node, "an intent", allowed: ["identifier", "title", "description", "category", "summary", "parameters", "confirm", "time-limit"],
                                 required: ["identifier", "title"]) else { return nil }
        let identifier = identifier(keys["identifier"], "intent identifier")
        let path = "intent '\(identifier ?? "?")'"
        let title = nonEmptyString(keys["title"], "\(path) title")
        let description = string(keys["description"], "\(path) description")
        var category = IntentCategory.generic
        if let text = string(keys["category"], "\(path) category") {
            if let value = IntentCategory(rawValue: text) {
                category = value
            } else {
                error(keys["category"], "\(path) category '\(text)' is not one of: \(IntentCategory.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        let confirm = bool(keys["confirm"], "\(path) confirm")
        var timeLimit = 10.0
        if let limit = number(keys["time-limit"], "\(path) time-limit", integer: false) {
            if (0.1...300).contains(limit) { timeLimit = limit } else { error(keys["time-limit"], "\(path) time-limit must be between 0.1 and 300 seconds, not \(limit)") }
        }
        var parameters: [AppManifest.Parameter] = []
        for item in sequence(keys["parameters"], "\(path) parameters", example: "[{name: room, type: enum, values: [...]}]") ?? [] {
            guard let parameter = parameter(item, intent: path) else { continue }
            if parameters.contains(where: { $0.name == parameter.name }) {
                error(item, "\(path) declares the parameter '\(parameter.name)' twice")
                continue
            }
            parameters.append(parameter)
        }
        for parameter in parameters {
            guard let parent = parameter.parent, let owner = parameters.first(where: { $0.name == parent.parameter }),
                  let values = owner.values ?? owner.type.builtInOptions else { continue }
            for value in parent.values.sorted() where !values.contains(where: { $0.id == value }) {
                error(parameter.mark, "parameter '\(parameter.name)' depends on \(owner.name) being '\(value)', which is not one of its values (\(values.map(\.id).joined(separator: ", ")))")
            }
        }
        let summary = string(keys["summary"], "\(path) summary") ?? ""
        for case .parameter(let name) in PhraseToken.tokens(of: summary) where !parameters.contains(where: { $0.name == name }) {
            error(keys["summary"], "\(path) summary names {\(name)}, which is not a parameter of the intent")
        }
        guard let identifier, let title else { return nil }
        return AppManifest.Intent(identifier: identifier, title: title, description: description, category: category, summary: summary,
                                  confirm: confirm, timeLimit: timeLimit, parameters: parameters, mark: mark(node))
    }

    mutating func error(_ mark: SourceMark, _ reason: String) {
        errors.append(ManifestError(file: file, mark: mark, reason: reason))
    }

    mutating func parameter(_ node: YAMLNode, intent path: String) -> AppManifest.Parameter? {
        guard let keys = mapping(node, "a parameter of \(path)",
                                 allowed: ["name", "title", "type", "prompt", "optional", "default", "min", "max", "below-min", "above-max", "values", "parent"],
                                 required: ["name", "type"]) else { return nil }
        let name = nonEmptyString(keys["name"], "parameter name")
        if let name, !Self.isIdentifier(name, leadingUnderscore: true) || name == "app" {
            error(keys["name"], "parameter name '\(name)' must be letters, digits and underscores, and not 'app' ({app} names the app in phrases)")
        }
        let where_ = "parameter '\(name ?? "?")' of \(path)"
        var type: ManifestParameterType?
        if let text = string(keys["type"], "\(where_) type") {
            type = ManifestParameterType(rawValue: text)
            if type == nil {
                error(keys["type"], "\(where_) type '\(text)' is not one of: \(ManifestParameterType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        let title = nonEmptyString(keys["title"], "\(where_) title") ?? name ?? ""
        let prompt = nonEmptyString(keys["prompt"], "\(where_) prompt") ?? "Which \(title.lowercased())?"
        let isOptional = bool(keys["optional"], "\(where_) optional") ?? false
        var values: [ParameterOption]?
        if let node = keys["values"] {
            if type != .enum {
                error(node, "\(where_): values are only for enum parameters\(type == .entity ? "; an entity's values come from the handler's options method" : "")")
            } else {
                values = enumValues(node, where_)
            }
        } else if type == .enum {
            error(node, "\(where_) is an enum and needs values, e.g. values: [{value: kitchen, display: kitchen}]")
        }
        var bounds: ParameterBounds?
        let numeric = type?.isNumeric ?? false
        let minimum = keys["min"].flatMap { number($0, "\(where_) min", integer: type != .decimal) }
        let maximum = keys["max"].flatMap { number($0, "\(where_) max", integer: type != .decimal) }
        for key in ["min", "max", "below-min", "above-max"] where keys[key] != nil && !numeric && type != nil {
            error(keys[key], "\(where_): \(key) is only for integer, decimal and duration parameters")
        }
        if let minimum, let maximum, minimum > maximum {
            error(keys["max"], "\(where_): max \(Self.number(maximum)) is below min \(Self.number(minimum))")
        }
        if numeric, minimum != nil || maximum != nil {
            bounds = ParameterBounds(minimum: minimum, maximum: maximum,
                belowMinimum: string(keys["below-min"], "\(where_) below-min") ?? "\(title.capitalizedFirst) starts at \(Self.spoken(minimum ?? 0, type)).",
                aboveMaximum: string(keys["above-max"], "\(where_) above-max") ?? "\(title.capitalizedFirst) goes up to \(Self.spoken(maximum ?? 0, type)).")
        }
        var defaultValue: String?
        if let node = keys["default"], let text = string(node, "\(where_) default"), let type {
            if let reason = Self.defaultProblem(text, type: type, values: values ?? type.builtInOptions) {
                error(node, "\(where_) default '\(text)' \(reason)")
            } else {
                defaultValue = (values ?? type.builtInOptions)?.first { $0.id == text || $0.title == text }?.id ?? text
            }
        }
        var parent: ParentCondition?
        if let node = keys["parent"], let parentKeys = mapping(node, "\(where_) parent", allowed: ["parameter", "values"], required: ["parameter", "values"]) {
            if let parameter = nonEmptyString(parentKeys["parameter"], "\(where_) parent parameter"),
               let parentValues = stringList(parentKeys["values"], "\(where_) parent values", example: "[delivery]") {
                parent = ParentCondition(parameter, in: Set(parentValues))
            }
        }
        guard let name, let type else { return nil }
        return AppManifest.Parameter(name: name, title: title, type: type, prompt: prompt, isOptional: isOptional, defaultValue: defaultValue,
                                     bounds: bounds, values: values, parent: parent, mark: mark(node))
    }

    mutating func enumValues(_ node: YAMLNode, _ where_: String) -> [ParameterOption]? {
        guard let items = sequence(node, "\(where_) values", example: "[{value: kitchen, display: kitchen}]") else { return nil }
        var options: [ParameterOption] = []
        for item in items {
            var option: ParameterOption?
            if item.text != nil {
                if let value = nonEmptyString(item, "a value of \(where_)") { option = ParameterOption(id: value, title: value) }
            } else if let keys = mapping(item, "a value of \(where_)", allowed: ["value", "display", "synonyms", "spoken"], required: ["value"]),
                      let value = nonEmptyString(keys["value"], "a value of \(where_)") {
                option = ParameterOption(id: value, title: nonEmptyString(keys["display"], "display of '\(value)'") ?? value,
                                         synonyms: stringList(keys["synonyms"], "synonyms of '\(value)'", example: "[cooker]") ?? [],
                                         spokenForm: nonEmptyString(keys["spoken"], "spoken form of '\(value)'"))
            }
            guard let option else { continue }
            if options.contains(where: { $0.id == option.id }) {
                error(item, "\(where_) lists the value '\(option.id)' twice")
                continue
            }
            if option.allForms.contains(where: { PhraseText.normalise($0).isEmpty }) {
                error(item, "\(where_): the value '\(option.id)' has a display or synonym with no word that can be said")
            }
            options.append(option)
        }
        if options.isEmpty && items.isEmpty { error(node, "\(where_) needs at least one value") }
        return options
    }

    mutating func shortcut(_ node: YAMLNode, intents: [AppManifest.Intent]) -> AppManifest.Shortcut? {
        guard let keys = mapping(node, "a shortcut", allowed: ["intent", "phrases", "title"], required: ["intent", "phrases"]) else { return nil }
        let intent = nonEmptyString(keys["intent"], "shortcut intent")
        if let intent, !intents.contains(where: { $0.identifier == intent }) {
            error(keys["intent"], "the shortcut uses the intent '\(intent)', which the manifest does not declare (declared: \(intents.map(\.identifier).joined(separator: ", ")))")
            return nil
        }
        var phrases: [AppManifest.Phrase] = []
        for item in sequence(keys["phrases"], "shortcut phrases", example: "[\"use {app}\"]") ?? [] {
            if let text = nonEmptyString(item, "a phrase") { phrases.append(AppManifest.Phrase(text: text, mark: mark(item))) }
        }
        if keys["phrases"]?.node.sequence?.isEmpty == true { error(keys["phrases"], "a shortcut needs at least one phrase") }
        let title = nonEmptyString(keys["title"], "shortcut title")
        guard let intent else { return nil }
        return AppManifest.Shortcut(intent: intent, title: title, phrases: phrases, mark: mark(node), intentMark: mark(keys["intent"]))
    }

    static func defaultProblem(_ text: String, type: ManifestParameterType, values: [ParameterOption]?) -> String? {
        if let values {
            return values.contains(where: { $0.id == text || $0.title == text }) ? nil
                : "is not one of the values (\(values.prefix(8).map(\.id).joined(separator: ", ")))"
        }
        switch type {
        case .integer: return Int(text) == nil ? "is not a whole number" : nil
        case .decimal: return Double(text) == nil ? "is not a number" : nil
        default: return nil
        }
    }

    static func number(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

    /// A bound as the device says it ("one hundred", "ten minutes").
    static func spoken(_ value: Double, _ type: ManifestParameterType?) -> String {
        if type == .duration { return SpokenDuration.describe(Int(value)) }
        if value == value.rounded(), value >= 0, value < 1_000_000 { return SpokenNumber.words(Int(value)) }
        return number(value)
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
