/// The installed apps, validated, with their intents described by reflection.
/// One app may be primary: its phrases need not name it and its command
/// templates are compiled.
public struct AppRegistry: Sendable {
    public let apps: [any ParleyApp]
    public let primaryApp: String?
    private let descriptors: [String: [String: IntentDescriptor]]

    /// Validates the apps (SPEC 4 rules) and describes their intents.
    /// `primaryApp` is an identifier, a name or a synonym of one of the apps.
    public init(apps: [any ParleyApp], primaryApp: String? = nil) throws {
        var primaryID: String?
        if let primaryApp {
            guard let app = Self.find(primaryApp, in: apps) else {
                throw RegistrationError(problems: [RegistrationProblem(kind: .unknownPrimaryApp, app: primaryApp,
                    message: "is not an installed app and cannot be primary (installed: \(apps.map(\.name).joined(separator: ", ")))")])
            }
            primaryID = app.identifier
        }
        try RegistrationValidator.validate(apps, primaryApp: primaryID)
        self.apps = apps
        self.primaryApp = primaryID
        var descriptors: [String: [String: IntentDescriptor]] = [:]
        for app in apps {
            for intent in app.intents { descriptors[app.identifier, default: [:]][intent.identifier] = IntentDescriptor(intent) }
        }
        self.descriptors = descriptors
    }

    public func app(_ identifier: String) -> (any ParleyApp)? { apps.first { $0.identifier == identifier } }

    /// The app a person or a tool names: its identifier, name or a synonym,
    /// in any case ("Coffee Maker", "CoffeeMaker", "barista").
    public func app(named text: String) -> (any ParleyApp)? { Self.find(text, in: apps) }

    private static func find(_ text: String, in apps: [any ParleyApp]) -> (any ParleyApp)? {
        let wanted = PhraseText.normalised(text)
        return apps.first { app in
            app.identifier == text || app.identifier.lowercased() == text.lowercased()
                || app.allNames.contains { PhraseText.normalised($0) == wanted }
        }
    }

    /// Checks a custom phrase's target as a person or a tool gave it and
    /// returns it with canonical identifiers and values; the error says what
    /// was expected.
    public func canonicalTarget(app appText: String, intent intentText: String, parameters: [String: String]) throws(IntentError)
        -> (app: String, intent: String, parameters: [String: String])
    {
        guard let app = app(named: appText) else {
            throw IntentError("There is no app '\(appText)'; installed: \(apps.map(\.name).joined(separator: ", ")).")
        }
        let intents = descriptors[app.identifier] ?? [:]
        guard let descriptor = intents[intentText]
            ?? intents.values.first(where: { $0.identifier.lowercased() == intentText.lowercased() })
        else {
            throw IntentError("There is no intent '\(intentText)' in app '\(app.name)'; it has: \(intents.keys.sorted().joined(separator: ", ")).")
        }
        var canonical: [String: String] = [:]
        for (name, value) in parameters {
            guard let definition = descriptor.parameter(name) else {
                throw IntentError("'\(name)' is not a parameter of \(app.name).\(descriptor.identifier); it has: \(descriptor.parameters.map(\.name).joined(separator: ", ")).")
            }
            guard let options = definition.staticOptions else {
                canonical[name] = value
                continue
            }
            let wanted = PhraseText.normalised(value)
            guard let option = options.first(where: { option in
                option.id == value || ([option.title] + option.synonyms).contains { PhraseText.normalised($0) == wanted }
            }) else {
                throw IntentError("'\(value)' is not a value of \(name); expected one of: \(options.map(\.title).joined(separator: ", ")).")
            }
            canonical[name] = option.id
        }
        return (app.identifier, descriptor.identifier, canonical)
    }
    public func descriptor(app: String, intent: String) -> IntentDescriptor? { descriptors[app]?[intent] }

    /// Vocabulary name of a parameter's values in the phrase model.
    public static func vocabularyName(app: String, intent: String, parameter: String) -> String {
        "\(app).\(intent).\(parameter)"
    }

    /// Finite parameters used in phrases and templates whose values need the
    /// app (entity suggestions), keyed by vocabulary name.
    public func dynamicOptions(context: @Sendable (String) -> IntentContext) async -> [String: [ParameterOption]] {
        var result: [String: [ParameterOption]] = [:]
        for app in apps {
            for shortcut in app.shortcuts {
                for case .parameter(let name) in shortcut.phrases.flatMap(PhraseToken.tokens(of:)) {
                    guard let definition = descriptor(app: app.identifier, intent: shortcut.intent.identifier)?.parameter(name),
                          definition.staticOptions == nil else { continue }
                    let key = Self.vocabularyName(app: app.identifier, intent: shortcut.intent.identifier, parameter: name)
                    result[key] = (try? await definition.valueType.options(context: context(app.identifier))) ?? []
                }
            }
        }
        return result
    }

    /// Compiles everything that can be said into the shared model (see `PhraseCompiler`).
    public func phraseModel(customPhrases: [CustomPhrase] = [], shortcuts: [Shortcut] = [],
                            context: @Sendable (String) -> IntentContext) async -> PhraseModel {
        PhraseCompiler.compile(self, customPhrases: customPhrases, dynamicOptions: await dynamicOptions(context: context), shortcuts: shortcuts)
    }
}
