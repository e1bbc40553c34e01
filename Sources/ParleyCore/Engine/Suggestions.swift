import Foundation

/// Suggestions learned from donations (docs/spec.md §7): the usual action for this
/// time of day, offered on a press, and the usual value of a parameter,
/// proposed instead of an open question. Wall-clock time is right here:
/// habits are about the time of day.
struct Suggestions: Sendable {
    let stores: ParleyStores
    var registry: AppRegistry

    /// The usual run at `now` with its values assigned, or nil when there is
    /// none or it no longer fills every required parameter (`lacking` names it then).
    func usualRun(at now: Date, calendar: Calendar, id: RunID, context: @Sendable (String) -> IntentContext) async -> (run: Run?, lacking: String?) {
        let donations = (try? await stores.donations.donations(app: nil, intent: nil, limit: 500)) ?? []
        guard let usual = Habits.suggestion(at: now, from: donations, calendar: calendar),
              let app = registry.app(usual.app), let descriptor = registry.descriptor(app: usual.app, intent: usual.intent)
        else { return (nil, nil) }
        let run = Run(id: id, app: app, descriptor: descriptor, values: usual.parameters,
                      settled: Set(usual.parameters.keys), trigger: .button)
        // Resolve silently so the intent instance holds the values; anything missing falls back to a conversation.
        let context = context(app.identifier)
        var complete = true
        for definition in descriptor.parameters {
            let assigned = (try? await run.intent.assign(definition.name, canonical: usual.parameters[definition.name], context: context)) ?? false
            guard !assigned else { continue }
            let parentCalls = definition.parent.map { $0.values.contains(usual.parameters[$0.parameter] ?? "") } ?? true
            if parentCalls && !definition.isOptional && definition.defaultValue == nil { complete = false }
        }
        return complete ? (run, nil) : (nil, run.key)
    }

    /// "Your usual at this time: … Press again to …."
    static func offer(_ run: Run, context: IntentContext) async -> String {
        // The stakes as the app states them ("one tomato soup ... three dollars twenty five."), else the summary.
        let stakes = ((try? await run.intent.confirmationDialog(context: context)) ?? nil)
            ?? run.descriptor.summary(values: run.values) + "."
        let verb = run.descriptor.category.requiresConfirmation ? run.descriptor.category.confirmationVerb : "do it"
        return "Your usual at this time: \(stakes.prefix(1).lowercased() + stakes.dropFirst()) Press again to \(verb)."
    }

    /// The usual value of the run's current parameter given the values
    /// before it, as an option to confirm.
    func usualOption(_ definition: ParameterDefinition, run: Run, context: IntentContext) async -> ParameterOption? {
        guard let donations = try? await stores.donations.donations(app: run.app.identifier, intent: run.descriptor.identifier, limit: 200) else { return nil }
        let earlier = run.descriptor.parameters.prefix(run.index).compactMap { p in run.values[p.name].map { (p.name, $0) } }
        guard let value = Habits.usualValue(of: definition.name, given: Dictionary(earlier, uniquingKeysWith: { a, _ in a }), in: donations) else { return nil }
        let options = (try? await definition.valueType.options(context: context)) ?? definition.staticOptions ?? []
        guard let option = options.first(where: { $0.id == value }) else {
            guard definition.kind.isOpen else { return nil }
            // A usual quantity is said as a number is ("Two, as usual?"), not as digits.
            if definition.kind == .integer, let number = Int(value), (0..<1_000_000).contains(number) {
                return ParameterOption(id: value, title: SpokenNumber.words(number))
            }
            return ParameterOption(id: value, title: value)
        }
        return option
    }
}

/// A person's own phrases ("Add to Siri"): checked against what the device
/// already understands, stored, listed, deleted.
struct CustomPhraseBook: Sendable {
    let stores: ParleyStores
    var registry: AppRegistry

    /// The phrase to store, or an error fit to show: no words, an unknown
    /// target, or a clash with a phrase the device already understands.
    func validated(_ phrase: String, app: String, intent: String, parameters: [String: String],
                   against resolver: Resolver?, at now: Date) async throws -> CustomPhrase {
        let words = PhraseText.normalise(phrase)
        try await checkBounds(phrase, words: words)
        let target = try registry.canonicalTarget(app: app, intent: intent, parameters: parameters)
        if let existing = resolver?.resolve(words: words) {
            throw IntentError("The phrase '\(phrase)' clashes with an existing phrase (\(existing.ruleID)).")
        }
        return CustomPhrase(phrase: phrase, app: target.app, intent: target.intent, parameters: target.parameters, created: now)
    }

    func all() async throws -> [CustomPhrase] { try await stores.customPhrases.customPhrases() }

    /// Every phrase is compiled into the grammars the recogniser searches for
    /// each command, so how many there are and how long each is are bounded.
    static let maximumPhrases = 200
    static let maximumWords = 12

    /// Refuses a phrase with no words, too many words, or one more than the
    /// device keeps; the message says which bound and how to make room.
    func checkBounds(_ phrase: String, words: [String]) async throws {
        guard !words.isEmpty else { throw IntentError("The phrase '\(phrase)' has no words.") }
        guard words.count <= Self.maximumWords else {
            throw IntentError("The phrase '\(phrase)' has \(words.count) words; a phrase may have at most \(Self.maximumWords).")
        }
        let count = try await all().count
        guard count < Self.maximumPhrases else {
            throw IntentError("There are already \(count) custom phrases, the most the device keeps (\(Self.maximumPhrases)); delete one first.")
        }
    }
}
