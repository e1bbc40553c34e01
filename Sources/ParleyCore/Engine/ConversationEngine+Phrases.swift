/// The phrase model the engine resolves commands with, and the custom phrases
/// ("Add to Siri") it is compiled from together with the apps and shortcuts.
extension ConversationEngine {
    func prepare() async {
        if commandResolver == nil { await reloadPhrases() } else { await retryMissingVocabularies() }
    }

    /// Compiles the phrase model from the apps and the stored custom phrases.
    ///
    /// An app that cannot give a parameter's values now (a handler slow to
    /// start on a busy CPU, one restarting) must not leave its phrases
    /// without them until the next reload: the model is compiled with what
    /// there is, and compiled again when `vocabularyRetry` is due (before the
    /// next command, or from `tick()` when idle), backing off while it fails.
    public func reloadPhrases() async {
        let custom = (try? await phrases.all()) ?? []
        let compiled = await registry.compiledPhrases(customPhrases: custom, shortcuts: shortcuts.shortcuts,
                                                      context: { self.context(app: $0) })
        commandModel = compiled.model
        commandResolver = Resolver(model: commandModel)
        let failedBefore = vocabularyRetry != nil
        vocabularyRetry = vocabularyRetry.next(unavailable: compiled.unavailable, at: clock.instant)
        if let retry = vocabularyRetry {
            let which = compiled.unavailable.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
            await log("phrases compiled without the values of \(which); asking again in \(Int(retry.interval)) s")
        } else if failedBefore {
            await log("phrases compiled again with every app's values")
        }
    }

    /// Compiles the phrases again if some app's values were missing and the
    /// retry is due. Returns whether it did.
    @discardableResult
    func retryMissingVocabularies() async -> Bool {
        guard let retry = vocabularyRetry, retry.due <= clock.instant else { return false }
        await reloadPhrases()
        return true
    }

    /// A person's own phrase for an intent with fixed values ("Add to Siri").
    /// Refused when it clashes with a phrase the device already understands.
    public func addCustomPhrase(_ phrase: String, app: String, intent: String, parameters: [String: String]) async throws {
        await prepare()
        if app == CustomPhrase.shortcutApp {
            try await addShortcutPhrase(phrase, shortcut: intent)
            return
        }
        let custom = try await phrases.validated(phrase, app: app, intent: intent, parameters: parameters,
                                           against: commandResolver, at: clock.now)
        try await stores.customPhrases.save(custom)
        await reloadPhrases()
    }

    /// Custom phrases, oldest first.
    public func customPhrases() async throws -> [CustomPhrase] { try await phrases.all() }

    /// Deletes a custom phrase; true when it existed. The phrase model is recompiled.
    @discardableResult
    public func deleteCustomPhrase(_ phrase: String) async throws -> Bool {
        let deleted = try await stores.customPhrases.deletePhrase(phrase)
        if deleted { await reloadPhrases() }
        return deleted
    }
}
