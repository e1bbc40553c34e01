/// One reason an app cannot be registered, naming the app, intent and phrase.
public struct RegistrationProblem: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        case phraseWithoutAppName, twoParametersInPhrase, openParameterInPhrase, unknownParameterInPhrase
        case tooManyShortcuts, duplicatePhrase, unknownParent, intentNotDeclared, duplicateApp
        case unknownTemplateList, malformedTemplate, unknownPrimaryApp
        /// Two apps answer to the same spoken name ("{app}" would be ambiguous).
        case duplicateAppName
    }
    public var kind: Kind
    public var app: String
    public var intent: String?
    public var phrase: String?
    public var message: String

    public init(kind: Kind, app: String, intent: String? = nil, phrase: String? = nil, message: String) {
        self.kind = kind
        self.app = app
        self.intent = intent
        self.phrase = phrase
        self.message = message
    }

    public var description: String {
        var where_ = "app '\(app)'"
        if let intent { where_ += ", intent '\(intent)'" }
        if let phrase { where_ += ", phrase '\(phrase)'" }
        return "\(where_): \(message)"
    }
}

/// Registration failed; every problem found is listed.
public struct RegistrationError: Error, Sendable, CustomStringConvertible {
    public var problems: [RegistrationProblem]
    public init(problems: [RegistrationProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Checks apps against the rules of docs/spec.md §4 before anything is compiled.
public enum RegistrationValidator {
    public static let maximumShortcuts = 10

    /// Throws `RegistrationError` listing every problem of the apps together.
    /// `primaryApp` (an identifier) may use phrases that do not name it.
    public static func validate(_ apps: [any ParleyApp], primaryApp: String?) throws {
        try validate(apps.map(AppDescription.init), primaryApp: primaryApp)
    }

    /// The same rules on descriptions, for apps that are not Swift types.
    public static func validate(_ apps: [AppDescription], primaryApp: String?) throws {
        let problems = problems(of: apps, primaryApp: primaryApp)
        if !problems.isEmpty { throw RegistrationError(problems: problems) }
    }

    /// Every problem of the apps together, in order; a problem about two apps
    /// (a clash) is reported on the later one, so apps added after those
    /// installed carry the blame.
    public static func problems(of apps: [AppDescription], primaryApp: String?) -> [RegistrationProblem] {
        var problems: [RegistrationProblem] = []
        var seenApps = Set<String>()
        var nameOwners: [String: (identifier: String, name: String)] = [:]
        var phraseOwners: [String: (app: String, phrase: String)] = [:]
        for app in apps {
            if !seenApps.insert(app.identifier).inserted {
                problems.append(.init(kind: .duplicateApp, app: app.name, message: "another app has the identifier '\(app.identifier)'"))
            }
            // Reported after the app's other problems: a shared name usually
            // shows first as a clash of phrases, which names the phrase.
            var nameClashes: [RegistrationProblem] = []
            for spoken in app.allNames.map(PhraseText.normalised) where !spoken.isEmpty {
                if let owner = nameOwners[spoken] {
                    if owner.identifier != app.identifier {
                        nameClashes.append(.init(kind: .duplicateAppName, app: app.name,
                            message: "the name '\(spoken)' already names the app '\(owner.name)'"))
                    }
                } else {
                    nameOwners[spoken] = (app.identifier, app.name)
                }
            }
            defer { problems += nameClashes }
            let descriptors = Dictionary(app.intents.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
            for descriptor in descriptors.values.sorted(by: { $0.identifier < $1.identifier }) {
                let names = Set(descriptor.parameters.map(\.name))
                for parameter in descriptor.parameters {
                    if let parent = parameter.parent, !names.contains(parent.parameter) || parent.parameter == parameter.name {
                        problems.append(.init(kind: .unknownParent, app: app.name, intent: descriptor.identifier,
                            message: "parameter '\(parameter.name)' depends on '\(parent.parameter)', which is not a parameter of this intent"))
                    }
                }
            }
            if app.shortcuts.count > maximumShortcuts {
                problems.append(.init(kind: .tooManyShortcuts, app: app.name,
                    message: "declares \(app.shortcuts.count) App Shortcuts; at most \(maximumShortcuts) are allowed"))
            }
            let nameWords = app.allNames.map(PhraseText.normalise)
            for shortcut in app.shortcuts {
                let intentID = shortcut.intent.identifier
                guard let descriptor = descriptors[intentID] else {
                    problems.append(.init(kind: .intentNotDeclared, app: app.name, intent: intentID,
                        message: "the App Shortcut '\(shortcut.shortTitle)' uses an intent the app does not list in `intents`"))
                    continue
                }
                for phrase in shortcut.phrases {
                    let tokens = PhraseToken.tokens(of: phrase)
                    let parameters = tokens.compactMap { if case .parameter(let p) = $0 { p } else { nil } }
                    func problem(_ kind: RegistrationProblem.Kind, _ message: String) {
                        problems.append(.init(kind: kind, app: app.name, intent: intentID, phrase: phrase, message: message))
                    }
                    if parameters.count > 1 {
                        problem(.twoParametersInPhrase, "has \(parameters.count) parameters (\(parameters.map { "{\($0)}" }.joined(separator: ", "))); a phrase may contain at most one")
                    }
                    for name in parameters {
                        guard let definition = descriptor.parameter(name) else {
                            problem(.unknownParameterInPhrase, "{\(name)} is not a parameter of the intent")
                            continue
                        }
                        // A type of an open kind stays open even when it offers a few
                        // suggestions (a date type listing "today" and "tomorrow").
                        if definition.kind.isOpen || !definition.isFinite {
                            problem(.openParameterInPhrase, "parameter '\(name)' is of the open type \(definition.kind.rawValue); a phrase parameter must come from a finite list (an enum or an entity's suggestions)")
                        }
                    }
                    let words = tokens.compactMap { if case .word(let w) = $0 { w } else { nil } }
                    let namesApp = tokens.contains(.appName) || nameWords.contains { containsRun(words, $0) }
                    if !namesApp && app.identifier != primaryApp {
                        problem(.phraseWithoutAppName, "does not contain the app's name or a synonym (\(app.allNames.joined(separator: ", "))); write {app} or the name")
                    }
                    for key in duplicateKeys(tokens, names: nameWords) {
                        if let owner = phraseOwners[key], owner.app != app.name {
                            problem(.duplicatePhrase, "is the same as the phrase '\(owner.phrase)' of app '\(owner.app)'")
                            break
                        }
                        phraseOwners[key] = (app.name, phrase)
                    }
                }
            }
            for template in app.templates {
                let intentID = template.intent.identifier
                guard let descriptor = descriptors[intentID] else {
                    problems.append(.init(kind: .intentNotDeclared, app: app.name, intent: intentID, phrase: template.pattern,
                        message: "the template uses an intent the app does not list in `intents`"))
                    continue
                }
                for (list, binding) in templateSlots(template.pattern) {
                    if descriptor.parameter(list)?.staticOptions == nil || descriptor.parameter(binding) == nil {
                        problems.append(.init(kind: .unknownTemplateList, app: app.name, intent: intentID, phrase: template.pattern,
                            message: "$\(list):\(binding) must name an enum parameter of the intent"))
                    }
                }
            }
        }
        return problems
    }

    /// The `$list:binding` slots of a template.
    public static func templateSlots(_ pattern: String) -> [(list: String, binding: String)] {
        pattern.split(whereSeparator: { " [](),".contains($0) }).compactMap { token in
            guard token.hasPrefix("$") else { return nil }
            let parts = token.dropFirst().split(separator: ":", maxSplits: 1).map(String.init)
            return (parts[0], parts.count > 1 ? parts[1] : parts[0])
        }
    }

    static func containsRun(_ words: [String], _ run: [String]) -> Bool {
        guard !run.isEmpty, run.count <= words.count else { return false }
        return (0...(words.count - run.count)).contains { Array(words[$0..<($0 + run.count)]) == run }
    }

    /// The phrase as heard, once per app name; parameters become a wildcard.
    static func duplicateKeys(_ tokens: [PhraseToken], names: [[String]]) -> [String] {
        let expansions = tokens.contains(.appName) ? names : [[]]
        return expansions.map { name in
            tokens.flatMap { token -> [String] in
                switch token {
                case .word(let w): [w]
                case .appName: name
                case .parameter: ["{}"]
                }
            }.joined(separator: " ")
        }
    }
}
