/// What a shortcut is checked against: the installed apps, what the device
/// already understands, and the board's input lines.
public struct ShortcutEnvironment: Sendable {
    public var registry: AppRegistry
    /// Every phrase the device understands without shortcuts (apps, built-in
    /// commands, custom phrases): a shortcut phrase may not clash with one.
    public var baseModel: PhraseModel
    /// The board file's input names; nil when no board is known (`check`
    /// without `--board`), so input triggers are not checked.
    public var inputNames: Set<String>?

    public init(registry: AppRegistry, baseModel: PhraseModel, inputNames: Set<String>? = nil) {
        self.registry = registry
        self.baseModel = baseModel
        self.inputNames = inputNames
    }

    /// The apps' phrases and built-in commands, with the given custom phrases.
    public init(registry: AppRegistry, customPhrases: [CustomPhrase] = [], inputNames: Set<String>? = nil) {
        self.init(registry: registry, baseModel: PhraseCompiler.compile(registry, customPhrases: customPhrases), inputNames: inputNames)
    }
}

/// Checks one parsed shortcut against the environment: every app, intent,
/// parameter, value and variable; other shortcuts only by name (loops and
/// clashes between files are `ShortcutLibrary`'s).
public struct ShortcutValidator {
    public let environment: ShortcutEnvironment
    let resolver: Resolver

    public init(environment: ShortcutEnvironment) {
        self.environment = environment
        resolver = Resolver(model: environment.baseModel)
    }

    /// What a variable holds, for checking `{var.property}`.
    enum VariableKind {
        case output(app: String, intent: String, properties: [String]?)
        case value
    }

    struct Scope {
        var variables: [String: VariableKind]
    }

    /// Every problem of one shortcut; `shortcutNames` are the names of the
    /// shortcuts being loaded with it.
    public func problems(_ shortcut: Shortcut, shortcutNames: Set<String>) -> [ShortcutProblem] {
        var problems: [ShortcutProblem] = []
        for phrase in shortcut.phrases {
            if let clash = clash(phrase.words) {
                problems.append(ShortcutProblem(phrase.location, "the phrase '\(phrase.text)' clashes with \(clash), which the device already understands"))
            }
        }
        for located in shortcut.triggers {
            if case .input(let name, _) = located.trigger, let inputs = environment.inputNames, !inputs.contains(name) {
                let known = inputs.isEmpty ? "the board file names no inputs" : "the board file's inputs are \(inputs.sorted().joined(separator: ", "))"
                problems.append(ShortcutProblem(located.location, "there is no input line '\(name)'; \(known)"))
            }
        }
        var scope = Scope(variables: [:])
        check(shortcut.actions, scope: &scope, shortcut: shortcut, shortcutNames: shortcutNames, problems: &problems)
        return problems
    }

    /// What the resolver makes of a phrase without shortcuts, in words, or nil.
    func clash(_ words: [String]) -> String? {
        guard let resolution = resolver.resolve(words.joined(separator: " ")) else { return nil }
        switch resolution.target {
        case .intent(let app, let intent, _):
            let appName = environment.registry.app(app)?.name ?? app
            let title = environment.registry.descriptor(app: app, intent: intent)?.title ?? intent
            return resolution.ruleID.hasPrefix("custom/") ? "the custom phrase for \(appName)'s \"\(title)\"" : "\(appName)'s \"\(title)\""
        case .builtin(let command): return "the built-in command '\(command.rawValue)'"
        case .customPhrase(let id): return "the custom phrase '\(id)'"
        case .shortcut(let name): return "the shortcut '\(name)'"
        case .answer: return "an answer"
        }
    }

    private func check(_ steps: [ShortcutStep], scope: inout Scope, shortcut: Shortcut, shortcutNames: Set<String>,
                       problems: inout [ShortcutProblem]) {
        func use(_ template: TextTemplate) {
            for reference in template.variables { checkReference(reference, scope: scope, problems: &problems) }
        }
        for step in steps {
            switch step.action {
            case .run(let appText, let intentText, let values, let name):
                guard let resolved = intent(appText, intentText, at: step.location, problems: &problems) else {
                    if let name { scope.variables[name] = .value }
                    continue
                }
                let appID = resolved.app, descriptor = resolved.descriptor
                for parameter in values.keys.sorted() {
                    let location = step.valueLocations[parameter] ?? step.location
                    guard let definition = descriptor.parameter(parameter) else {
                        problems.append(ShortcutProblem(location, "'\(parameter)' is not a parameter of \(appID).\(descriptor.identifier); it has \(descriptor.parameters.map(\.name).joined(separator: ", "))"))
                        continue
                    }
                    switch values[parameter]! {
                    case .value(let text):
                        if let reason = Self.valueProblem(text, definition) { problems.append(ShortcutProblem(location, reason)) }
                    case .template(let template): use(template)
                    case .ask: break
                    }
                }
                if let name {
                    scope.variables[name] = .output(app: appID, intent: descriptor.identifier, properties: descriptor.outputProperties)
                }
            case .speak(let text): use(text)
            case .ask(let question, let name, _, _):
                use(question)
                scope.variables[name] = .value
            case .choose(let prompt, _, let name):
                if let prompt { use(prompt) }
                scope.variables[name] = .value
            case .if(let subject, let comparison, let then, let otherwise):
                checkReference(subject, scope: scope, problems: &problems)
                if let operand = comparison.operand {
                    use(operand)
                    switch comparison {
                    case .above, .below, .atLeast, .atMost:
                        if operand.variables.isEmpty, Double(operand.source.trimmingCharacters(in: .whitespaces)) == nil {
                            problems.append(ShortcutProblem(step.location, "`\(comparison.key):` compares numbers; '\(operand.source)' is not a number"))
                        }
                    default: break
                    }
                }
                var thenScope = scope, elseScope = scope
                check(then, scope: &thenScope, shortcut: shortcut, shortcutNames: shortcutNames, problems: &problems)
                check(otherwise, scope: &elseScope, shortcut: shortcut, shortcutNames: shortcutNames, problems: &problems)
                // Only what both branches define is defined afterwards.
                for (name, kind) in thenScope.variables where elseScope.variables[name] != nil { scope.variables[name] = kind }
            case .repeat(_, let body):
                var inner = scope
                inner.variables["index"] = .value
                check(body, scope: &inner, shortcut: shortcut, shortcutNames: shortcutNames, problems: &problems)
                // The body runs at least once (times >= 1): what it defines stays defined.
                for (name, kind) in inner.variables where name != "index" || scope.variables["index"] != nil { scope.variables[name] = kind }
            case .wait, .led, .sound:
                break
            case .set(let name, let value):
                use(value)
                scope.variables[name] = .value
            case .shortcut(let name):
                if !shortcutNames.contains(name) {
                    let known = shortcutNames.subtracting([shortcut.name]).sorted()
                    problems.append(ShortcutProblem(step.location, "there is no shortcut named '\(name)'" + (known.isEmpty ? "" : "; known: \(known.joined(separator: ", "))")))
                } else if name == shortcut.name {
                    problems.append(ShortcutProblem(step.location, "'\(name)' runs itself; shortcuts may not run each other in a loop"))
                }
            }
        }
    }

    private func checkReference(_ reference: VariableReference, scope: Scope, problems: inout [ShortcutProblem]) {
        guard let kind = scope.variables[reference.name] else {
            problems.append(ShortcutProblem(reference.location, "the variable '\(reference.name)' is used before any action defines it"))
            return
        }
        guard let property = reference.property else { return }
        switch kind {
        case .output(let app, let intent, let properties):
            if let properties, !properties.contains(property) {
                problems.append(ShortcutProblem(reference.location, "\(app).\(intent) gives no '\(property)'; its output has \(properties.isEmpty ? "no properties" : properties.joined(separator: ", "))"))
            }
        case .value:
            problems.append(ShortcutProblem(reference.location, "'\(reference.name)' holds a single value, not an intent's output: it has no property '\(property)'"))
        }
    }

    struct ResolvedIntent {
        var app: String
        var descriptor: IntentDescriptor
    }

    /// The app and intent a `run:` names (identifiers, or an app's name, in any case).
    private func intent(_ appText: String, _ intentText: String, at location: SourceLocation,
                        problems: inout [ShortcutProblem]) -> ResolvedIntent? {
        let registry = environment.registry
        guard let app = registry.app(appText) ?? registry.app(named: appText) else {
            problems.append(ShortcutProblem(location, "there is no app '\(appText)'; installed: \(registry.apps.map(\.identifier).joined(separator: ", "))"))
            return nil
        }
        let appID = app.identifier
        let intents = app.intents.map { $0.identifier }
        let identifier = intents.first { $0 == intentText } ?? intents.first { $0.lowercased() == intentText.lowercased() }
        guard let identifier, let descriptor = registry.descriptor(app: appID, intent: identifier) else {
            problems.append(ShortcutProblem(location, "there is no intent '\(intentText)' in \(appID); it has \(intents.joined(separator: ", "))"))
            return nil
        }
        return ResolvedIntent(app: appID, descriptor: descriptor)
    }

    /// Why a fixed value cannot be given to a parameter, or nil when it fits.
    static func valueProblem(_ text: String, _ definition: ParameterDefinition) -> String? {
        let name = definition.name
        if let options = definition.staticOptions {
            if options.contains(where: { $0.id == text }) { return nil }
            let listed = options.count <= 12 ? options.map(\.id).joined(separator: ", ") : options.prefix(12).map(\.id).joined(separator: ", ") + ", …"
            return "'\(text)' is not a value of \(name); expected one of \(listed)"
        }
        switch definition.kind {
        case .integer:
            guard let number = Int(text) else { return "\(name) needs a whole number, not '\(text)'" }
            return definition.bounds?.violation(Double(number)).map { "\(name) \(text) is out of range: \($0)" }
        case .decimal:
            guard let number = Double(text) else { return "\(name) needs a number, not '\(text)'" }
            return definition.bounds?.violation(number).map { "\(name) \(text) is out of range: \($0)" }
        case .entity, .text, .date, .time:
            return text.isEmpty && !definition.isOptional ? "\(name) needs a value" : nil
        case .boolean, .duration, .enumeration:
            return nil
        }
    }
}
