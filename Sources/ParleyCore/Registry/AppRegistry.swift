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
            let wanted = PhraseText.normalised(primaryApp)
            guard let app = apps.first(where: { app in
                app.identifier == primaryApp || app.allNames.contains { PhraseText.normalised($0) == wanted }
            }) else {
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
    public func phraseModel(customPhrases: [CustomPhrase] = [], context: @Sendable (String) -> IntentContext) async -> PhraseModel {
        PhraseCompiler.compile(self, customPhrases: customPhrases, dynamicOptions: await dynamicOptions(context: context))
    }
}
