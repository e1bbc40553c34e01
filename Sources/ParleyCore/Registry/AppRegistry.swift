/// The installed apps, validated: the apps compiled into Parley (their
/// intents described by reflection) and external apps (described by their
/// manifests). The engine sees only `AppDescription`s, so both kinds take
/// part in everything alike. One app may be primary: its phrases need not
/// name it and its command templates are compiled.
public struct AppRegistry: Sendable {
    public let apps: [AppDescription]
    public let primaryApp: String?
    /// The Swift apps this registry was made from (kept to make a registry
    /// with other external apps).
    private let swiftApps: [AppDescription]
    private let descriptors: [String: [String: IntentDescriptor]]

    /// Validates the apps (docs/spec.md §4 rules) and describes their intents.
    /// `primaryApp` is an identifier, a name or a synonym of one of the apps.
    /// `external` apps were checked when they were loaded; they are checked
    /// again here together with the rest.
    public init(apps: [any ParleyApp], external: [AppDescription] = [], primaryApp: String? = nil) throws {
        try self.init(swiftApps: apps.map(AppDescription.init), external: external, primaryApp: primaryApp)
    }

    private init(swiftApps: [AppDescription], external: [AppDescription], primaryApp: String?) throws {
        let apps = swiftApps + external
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
        self.swiftApps = swiftApps
        self.primaryApp = primaryID
        var descriptors: [String: [String: IntentDescriptor]] = [:]
        for app in apps {
            for intent in app.intents { descriptors[app.identifier, default: [:]][intent.identifier] = intent }
        }
        self.descriptors = descriptors
    }

    /// The same Swift apps and primary app with these external apps instead
    /// (an app folder added, changed or removed).
    public func replacingExternal(_ external: [AppDescription]) throws -> AppRegistry {
        try AppRegistry(swiftApps: swiftApps, external: external, primaryApp: primaryApp)
    }

    /// The external apps (from an apps folder).
    public var externalApps: [AppDescription] { apps.filter(\.isExternal) }

    public func app(_ identifier: String) -> AppDescription? { apps.first { $0.identifier == identifier } }

    /// The app a person or a tool names: its identifier, name or a synonym,
    /// in any case ("Coffee Maker", "CoffeeMaker", "barista").
    public func app(named text: String) -> AppDescription? { Self.find(text, in: apps) }

    private static func find(_ text: String, in apps: [AppDescription]) -> AppDescription? {
        let wanted = PhraseText.normalised(text)
        return apps.first { app in
            app.identifier == text || app.identifier.lowercased() == text.lowercased()
                || app.allNames.contains { PhraseText.normalised($0) == wanted }
        }
    }

    /// An intent by app identifier and intent identifier, as shortcut files
    /// write it (`run: KitchenLights.SetLight`); built-in and external alike.
    public func intent(_ qualified: String) -> (app: AppDescription, intent: IntentDescriptor)? {
        let parts = qualified.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, let app = app(parts[0]), let intent = descriptor(app: parts[0], intent: parts[1]) else { return nil }
        return (app, intent)
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

    /// Values of the finite parameters used in phrases and templates that
    /// need the app (entity suggestions), keyed by vocabulary name, and the
    /// vocabularies whose app could not give them (a handler that did not
    /// answer in time, a throwing `options`), with the reason.
    public struct DynamicOptions: Sendable {
        public var values: [String: [ParameterOption]] = [:]
        public var unavailable: [String: String] = [:]
    }

    public func dynamicOptions(context: @Sendable (String) -> IntentContext) async -> DynamicOptions {
        var result = DynamicOptions()
        for app in apps {
            for shortcut in app.shortcuts {
                for case .parameter(let name) in shortcut.phrases.flatMap(PhraseToken.tokens(of:)) {
                    guard let definition = descriptor(app: app.identifier, intent: shortcut.intent.identifier)?.parameter(name),
                          definition.staticOptions == nil else { continue }
                    let key = Self.vocabularyName(app: app.identifier, intent: shortcut.intent.identifier, parameter: name)
                    // Asked once per vocabulary, however many phrases use it.
                    guard result.values[key] == nil else { continue }
                    do {
                        result.values[key] = try await definition.valueType.options(context: context(app.identifier)) ?? []
                    } catch {
                        // Compiled without values for now; the engine asks again later.
                        result.values[key] = []
                        result.unavailable[key] = "\(error)"
                    }
                }
            }
        }
        return result
    }

    /// Compiles everything that can be said into the shared model (see `PhraseCompiler`).
    public func phraseModel(customPhrases: [CustomPhrase] = [], shortcuts: [Shortcut] = [],
                            context: @Sendable (String) -> IntentContext) async -> PhraseModel {
        await compiledPhrases(customPhrases: customPhrases, shortcuts: shortcuts, context: context).model
    }

    /// `phraseModel`, with the vocabularies that were compiled without their
    /// values because the app could not give them (see `DynamicOptions`).
    public func compiledPhrases(customPhrases: [CustomPhrase] = [], shortcuts: [Shortcut] = [],
                                context: @Sendable (String) -> IntentContext) async -> (model: PhraseModel, unavailable: [String: String]) {
        let options = await dynamicOptions(context: context)
        let model = PhraseCompiler.compile(self, customPhrases: customPhrases, dynamicOptions: options.values, shortcuts: shortcuts)
        return (model, options.unavailable)
    }
}
