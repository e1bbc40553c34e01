import Foundation
import ParleyIntents
import Synchronization

/// An external app's intent: every step goes to the handler as a JSON-RPC
/// request; a step the handler does not implement (-32601) gets Parley's
/// default behaviour, as a Swift intent that does not customise it.
struct ExternalIntentImplementation: IntentImplementation {
    let intent: String
    let appName: String
    let timeLimit: Double
    let handler: HandlerSupervisor
    let declared: [String: AppManifest.Parameter]

    func makeRun() -> any IntentRun {
        ExternalIntentRun(intent: intent, appName: appName, timeLimit: timeLimit, handler: handler, declared: declared)
    }
}

final class ExternalIntentRun: IntentRun {
    let intent: String
    let appName: String
    let timeLimit: Double
    let handler: HandlerSupervisor
    let declared: [String: AppManifest.Parameter]
    /// The canonical values resolved so far, as the handler receives them.
    private let values = Mutex<[String: String]>([:])

    init(intent: String, appName: String, timeLimit: Double, handler: HandlerSupervisor, declared: [String: AppManifest.Parameter]) {
        self.intent = intent
        self.appName = appName
        self.timeLimit = timeLimit
        self.handler = handler
        self.declared = declared
    }

    var parameters: JSONValue { .object(values.withLock { $0 }.mapValues(JSONValue.string)) }

    func assign(_ parameter: String, canonical: String?, context: IntentContext) async throws -> Bool {
        guard let definition = declared[parameter] else { return false }
        values.withLock { $0[parameter] = canonical }
        // As a Swift intent: a required parameter cannot be left empty.
        return canonical != nil || definition.isOptional
    }

    func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        let params: JSONValue = ["intent": .string(intent), "parameter": .string(parameter),
                                 "proposed": proposed.map(JSONValue.string) ?? .null, "parameters": parameters]
        do throws(HandlerFailure) {
            return try ResolutionReader.read(try await handler.call(.resolve, params: params))
        } catch .notImplemented {
            return nil
        } catch {
            throw IntentError(error.spokenMessage(app: appName))
        }
    }

    func confirmationDialog(context: IntentContext) async throws -> String? {
        do throws(HandlerFailure) {
            let result = try await handler.call(.confirmation, params: ["intent": .string(intent), "parameters": parameters])
            guard let dialog = result["dialog"] else { throw HandlerFailure.badAnswer("no \"dialog\" in the confirmation result") }
            if dialog.isNull { return nil }
            guard let text = dialog.string else { throw HandlerFailure.badAnswer("a \"dialog\" that is \(dialog.kindName), not a string") }
            return text
        } catch .notImplemented {
            return nil
        } catch {
            throw IntentError(error.spokenMessage(app: appName))
        }
    }

    func perform(context: IntentContext) async throws -> IntentResult {
        do throws(HandlerFailure) {
            let result = try await handler.call(.perform, params: ["intent": .string(intent), "parameters": parameters],
                                                timeLimit: .milliseconds(Int64(timeLimit * 1000)))
            return try ResultReader.read(result)
        } catch {
            throw IntentError(error.spokenMessage(app: appName))
        }
    }
}

/// An external parameter's values: an enum's from the manifest, an entity's
/// from the handler's `options` method (the suggested values, in order).
struct ExternalValueSource: ParameterValueSource {
    let intent: String
    let parameter: String
    let type: ManifestParameterType
    let staticOptions: [ParameterOption]?
    let appName: String
    let handler: HandlerSupervisor

    var suggestedOptions: [ParameterOption]? { staticOptions }

    func options(context: IntentContext) async throws -> [ParameterOption]? {
        guard type == .entity else { return staticOptions }
        do throws(HandlerFailure) {
            let result = try await handler.call(.options, params: ["intent": .string(intent), "parameter": .string(parameter)])
            return try OptionReader.options(result["options"], field: "options")
        } catch .notImplemented {
            return nil
        } catch {
            throw IntentError(error.spokenMessage(app: appName))
        }
    }

    func lookup(_ text: String, context: IntentContext) async throws -> [ParameterOption] {
        OptionLookup.matching(text, in: (try await options(context: context)) ?? [])
    }

    func defaultOption(context: IntentContext) async throws -> ParameterOption? { nil }
}

/// Reads a `resolve` result (docs/external-apps.md, "resolve").
enum ResolutionReader {
    static func read(_ result: JSONValue) throws(HandlerFailure) -> ParameterResolution {
        guard let kind = result["resolution"]?.string else { throw .badAnswer("no \"resolution\" in the resolve result") }
        let prompt = result["prompt"]?.string
        switch kind {
        case "success":
            guard let value = result["value"]?.canonicalString else { throw .badAnswer("a success without a \"value\"") }
            return .success(value)
        case "needs-value":
            return .needsValue(prompt: prompt)
        case "disambiguation":
            let options = try OptionReader.options(result["options"], field: "options")
            guard !options.isEmpty else { throw .badAnswer("a disambiguation without options") }
            return .disambiguation(options, prompt: prompt)
        case "confirmation":
            guard let value = result["value"] else { throw .badAnswer("a confirmation without a \"value\"") }
            guard let option = try OptionReader.option(value) else { throw .badAnswer("a confirmation \"value\" that is \(value.kindName)") }
            return .confirmation(option, prompt: prompt)
        case "unsupported":
            guard let reason = result["reason"]?.string else { throw .badAnswer("unsupported without a \"reason\"") }
            return .unsupported(reason: reason)
        case "not-required":
            return .notRequired
        default:
            throw .badAnswer("the resolution '\(kind)', which is not success, needs-value, disambiguation, confirmation, unsupported or not-required")
        }
    }
}

/// Reads options: `{"value", "display", "synonyms", "spoken"}` objects, or plain strings.
enum OptionReader {
    static func options(_ value: JSONValue?, field: String) throws(HandlerFailure) -> [ParameterOption] {
        guard let items = value?.array else { throw .badAnswer("no \"\(field)\" list") }
        var result: [ParameterOption] = []
        for item in items {
            guard let option = try option(item) else { throw .badAnswer("an entry of \"\(field)\" that is \(item.kindName)") }
            result.append(option)
        }
        return result
    }

    static func option(_ item: JSONValue) throws(HandlerFailure) -> ParameterOption? {
        if let text = item.canonicalString { return ParameterOption(id: text, title: text) }
        guard case .object = item else { return nil }
        guard let id = item["value"]?.canonicalString else { throw .badAnswer("an option without a \"value\"") }
        let synonyms = item["synonyms"]?.array?.compactMap(\.string) ?? []
        return ParameterOption(id: id, title: item["display"]?.string ?? id, synonyms: synonyms, spokenForm: item["spoken"]?.string)
    }
}

/// Reads a `perform` result: `dialog`, optional `detail` and `output`.
enum ResultReader {
    static func read(_ result: JSONValue) throws(HandlerFailure) -> IntentResult {
        guard let dialog = result["dialog"]?.string else { throw .badAnswer("no \"dialog\" text in the perform result") }
        var output: [String: OutputValue] = [:]
        if case .object(let fields)? = result["output"] {
            for (name, value) in fields {
                switch value {
                case .number(let number): output[name] = .number(number)
                case .string(let text): output[name] = .text(text)
                case .bool(let flag): output[name] = .text(flag ? "true" : "false")
                default: throw .badAnswer("the output '\(name)', which is \(value.kindName); outputs are numbers, texts or booleans")
                }
            }
        } else if let other = result["output"], !other.isNull {
            throw .badAnswer("an \"output\" that is \(other.kindName), not an object")
        }
        return IntentResult(dialog: dialog, detail: result["detail"]?.string, output: output)
    }
}
