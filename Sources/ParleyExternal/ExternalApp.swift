import Foundation
import Logging
import ParleyIntents

/// An app from an apps folder: its manifest, its handler and the description
/// the registry and the engine use like any other app's.
public struct ExternalApp: Sendable {
    public let manifest: AppManifest
    public let handler: HandlerSupervisor
    public let description: AppDescription

    /// The variable naming the folder where a handler keeps its data.
    public static let dataVariable = "PARLEY_APP_DATA"

    /// Describes the manifest's app; the handler is not started. With a
    /// `dataDirectory`, the handler finds `<dataDirectory>/<identifier>`
    /// (created) in `PARLEY_APP_DATA`: data kept there, outside the app
    /// folder, does not make the folder look changed and reload the app.
    public init(manifest: AppManifest, limits: HandlerLimits = HandlerLimits(), dataDirectory: URL? = nil, logger: Logger) {
        self.manifest = manifest
        var environment: [String: String] = [:]
        if let dataDirectory {
            let data = dataDirectory.appendingPathComponent(manifest.identifier)
            try? FileManager.default.createDirectory(at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            environment[Self.dataVariable] = data.path
        }
        if limits.sandbox != nil { Self.openToSandbox(manifest: manifest, environment: environment, logger: logger) }
        handler = HandlerSupervisor(app: manifest.identifier, argv: manifest.handler, directory: manifest.folder,
                                    environment: environment, limits: limits, logger: logger)
        description = Self.describe(manifest, handler: handler)
    }

    /// A handler in the sandbox runs as another user: it is given its
    /// folder (read) and its data folder (read and write) through the
    /// sandbox's group, and passage through the folders holding them.
    static func openToSandbox(manifest: AppManifest, environment: [String: String], logger: Logger) {
        guard let access = SandboxAccess.lookup() else {
            logger.warning("[\(manifest.identifier)] the handler sandbox's group parley-app does not exist: its handler may not read its folder")
            return
        }
        var problems = access.grant(manifest.folder, writable: false)
        problems += [access.pass(manifest.folder.deletingLastPathComponent())].compactMap { $0 }
        if let data = environment[dataVariable].map(URL.init(fileURLWithPath:)) {
            problems += access.grant(data, writable: true)
            problems += [access.pass(data.deletingLastPathComponent())].compactMap { $0 }
        }
        for problem in problems.prefix(5) { logger.warning("[\(manifest.identifier)] sandbox: \(problem)") }
    }

    static func describe(_ manifest: AppManifest, handler: HandlerSupervisor) -> AppDescription {
        let intents = manifest.intents.map { intent in
            let declared = Dictionary(intent.parameters.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let parameters = intent.parameters.map { parameter in
                let options = parameter.values ?? parameter.type.builtInOptions
                return ParameterDefinition(
                    name: parameter.name, title: parameter.title, prompt: parameter.prompt, kind: parameter.type.kind,
                    isOptional: parameter.isOptional, defaultValue: parameter.defaultValue, bounds: parameter.bounds,
                    parent: parameter.parent, staticOptions: options,
                    valueType: ExternalValueSource(intent: intent.identifier, parameter: parameter.name, type: parameter.type,
                                                   staticOptions: options, appName: manifest.name, handler: handler))
            }
            return IntentDescriptor(
                identifier: intent.identifier, title: intent.title, description: intent.description, category: intent.category,
                parameterSummary: intent.summary, requiresConfirmation: intent.confirm, timeLimit: intent.timeLimit,
                parameters: parameters,
                implementation: ExternalIntentImplementation(intent: intent.identifier, appName: manifest.name,
                                                             timeLimit: intent.timeLimit, handler: handler, declared: declared))
        }
        let byID = Dictionary(intents.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        let shortcuts = manifest.shortcuts.compactMap { shortcut in
            byID[shortcut.intent].map { intent in
                AppDescription.Shortcut(intent: intent, phrases: shortcut.phrases.map(\.text), shortTitle: shortcut.title ?? intent.title)
            }
        }
        return AppDescription(identifier: manifest.identifier, name: manifest.name, synonyms: manifest.synonyms,
                              intents: intents, shortcuts: shortcuts, isExternal: true)
    }

    /// Loads and checks an app folder against the apps already installed:
    /// the manifest's own rules, then every rule of app registration. The
    /// handler is not started.
    /// `primaryApp` (an identifier, name or synonym): when it names this
    /// app, its phrases need not name it, as the primary app's.
    public static func load(folder: URL, installed: [AppDescription], limits: HandlerLimits = HandlerLimits(),
                            dataDirectory: URL? = nil, primaryApp: String? = nil, logger: Logger) throws(ManifestErrors) -> ExternalApp {
        let manifest = try ManifestLoader.load(folder: folder)
        let app = ExternalApp(manifest: manifest, limits: limits, dataDirectory: dataDirectory, logger: logger)
        let primary = primaryApp.flatMap { wanted in
            app.description.allNames.map(PhraseText.normalised).contains(PhraseText.normalised(wanted))
                || wanted == manifest.identifier ? manifest.identifier : nil
        }
        let before = Set(RegistrationValidator.problems(of: installed, primaryApp: nil).map(\.description))
        let problems = RegistrationValidator.problems(of: installed + [app.description], primaryApp: primary)
            .filter { !before.contains($0.description) }
        guard problems.isEmpty else {
            throw ManifestErrors(problems.map { manifest.error(for: $0) }
                .sorted { ($0.mark.line, $0.mark.column) < ($1.mark.line, $1.mark.column) })
        }
        return app
    }
}

extension AppManifest {
    /// A registration problem placed where it arises in the file: the phrase,
    /// the parameter, the intent, or the key.
    func error(for problem: RegistrationProblem) -> ManifestError {
        var mark = marks["identifier"] ?? SourceMark(line: 1, column: 1)
        var reason = problem.message
        let intent = problem.intent.flatMap { id in intents.first { $0.identifier == id } }
        switch problem.kind {
        case .duplicateApp: mark = marks["identifier"] ?? mark
        case .duplicateAppName: mark = marks["name"] ?? mark
        case .tooManyShortcuts: mark = marks["shortcuts"] ?? mark
        case .unknownParent:
            if let intent {
                let names = Set(intent.parameters.map(\.name))
                mark = intent.parameters.first { $0.parent.map { !names.contains($0.parameter) } ?? false }?.mark
                    ?? intent.parameters.first { $0.parent?.parameter == $0.name }?.mark ?? intent.mark
                reason = "intent '\(intent.identifier)': \(reason)"
            }
        default:
            if let phrase = problem.phrase,
               let found = shortcuts.filter({ $0.intent == problem.intent }).flatMap(\.phrases).first(where: { $0.text == phrase }) {
                mark = found.mark
                reason = "phrase '\(phrase)': \(reason)"
            } else if let intent {
                mark = intent.mark
                reason = "intent '\(intent.identifier)': \(reason)"
            }
        }
        return ManifestError(file: file, mark: mark, reason: reason)
    }
}
