import Foundation

/// What the device says to teach itself: "what can I say", "what can <app>
/// do", and the tip of a shorter phrase after a long conversation.
struct Guide: Sendable {
    let registry: AppRegistry
    /// Intents already tipped (each is tipped once).
    private var tipped = Set<String>()

    init(registry: AppRegistry) { self.registry = registry }

    /// "You can say: …", the most used first.
    func helpLine(donations: [Donation], custom: [CustomPhrase]) -> String {
        let top = Array(examples(for: registry.apps, donations: donations, custom: custom).prefix(5))
        return "You can say: \(Dialog.list(top))."
    }

    /// "<App> can …. For example, say: …." (nil for an unknown app).
    func appHelpLine(_ appID: String, donations: [Donation], custom: [CustomPhrase]) -> String? {
        guard let app = registry.app(appID) else { return nil }
        let titles = app.shortcuts.prefix(5).map { $0.shortTitle.prefix(1).lowercased() + $0.shortTitle.dropFirst() }
        var line = "\(app.name) can \(Dialog.list(titles, conjunction: "and"))."
        if let example = examples(for: [app], donations: donations, custom: custom).first { line += " For example, say: \(example)." }
        return line
    }

    /// Example phrases of the apps, most used intents first (custom phrases
    /// count when every app is listed).
    private func examples(for apps: [any ParleyApp], donations: [Donation], custom: [CustomPhrase]) -> [String] {
        let usage = Habits.usageCounts(donations)
        var ranked: [(phrase: String, score: Int, order: Int)] = []
        if apps.count == registry.apps.count {
            for phrase in custom { ranked.append((phrase.phrase, usage["\(phrase.app).\(phrase.intent)", default: 0], ranked.count)) }
        }
        for app in apps {
            for shortcut in app.shortcuts {
                guard let phrase = shortcut.phrases.first else { continue }
                let example = render(phrase, app: app, intent: shortcut.intent.identifier, values: [:])
                ranked.append((example, usage["\(app.identifier).\(shortcut.intent.identifier)", default: 0], ranked.count))
            }
        }
        return ranked.sorted { $0.score != $1.score ? $0.score > $1.score : $0.order < $1.order }.map(\.phrase)
    }

    /// A phrase written out: `{app}` becomes the app's name (dropped for the
    /// primary app), a parameter its value or its first option.
    func render(_ phrase: String, app: any ParleyApp, intent: String, values: [String: String]) -> String {
        var tokens = PhraseToken.tokens(of: phrase)
        if app.identifier == registry.primaryApp { tokens = PhraseCompiler.withoutAppName(tokens) }
        let descriptor = registry.descriptor(app: app.identifier, intent: intent)
        return tokens.map { token -> String in
            switch token {
            case .word(let word): return word
            case .appName: return app.name
            case .parameter(let name):
                let definition = descriptor?.parameter(name)
                let options = definition?.valueType.suggestedOptions ?? definition?.staticOptions ?? []
                if let value = values[name] {
                    return (definition?.staticOptions ?? options).first { $0.id == value }?.title ?? value
                }
                return options.first?.title ?? name
            }
        }.joined(separator: " ")
    }

    /// "Next time, just say: …" after a run that needed two questions or
    /// more, once per intent; nil when no phrase is worth saying.
    mutating func tip(after run: Run) -> String? {
        guard run.questions >= 2, !tipped.contains(run.key) else { return nil }
        let shortcuts = run.app.shortcuts.filter { $0.intent.identifier == run.descriptor.identifier }
        // The tip must be worth saying: a phrase that would run the very same
        // action and spares a question the person had to answer. "Order
        // tomato with Soup Chef" after a delivery order would quietly order
        // for pickup (the default), so it is never offered then.
        guard let phrase = shortcuts.flatMap(\.phrases).first(where: { phrase in
            let carried = Self.parameters(in: phrase)
            return carried.contains { run.asked.contains($0) } && Self.reproduces(run, carrying: carried)
        }) else { return nil }
        tipped.insert(run.key)
        return "Next time, just say: \(render(phrase, app: run.app, intent: run.descriptor.identifier, values: run.values))."
    }

    private static func parameters(in phrase: String) -> [String] {
        PhraseToken.tokens(of: phrase).compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// Whether a phrase carrying `carried` (filled with the run's values)
    /// would run with the run's values: each carried value must be known, and
    /// each parameter left out must not differ from the default it would take.
    private static func reproduces(_ run: Run, carrying carried: [String]) -> Bool {
        for name in carried where (run.values[name] ?? "").isEmpty { return false }
        for definition in run.descriptor.parameters where !carried.contains(definition.name) {
            // nil: a child its parent did not call for, which the phrase would skip the same way.
            guard let value = run.values[definition.name], !value.isEmpty, let fallback = definition.defaultValue else { continue }
            if value != fallback { return false }
        }
        return true
    }
}
