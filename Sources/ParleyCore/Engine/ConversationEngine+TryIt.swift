extension ConversationEngine {
    /// What these words would start, found by the same resolver as speech and
    /// `parley say`, without starting it: nothing runs, nothing is donated
    /// (the web page's "Try it"). Nil when no phrase matches.
    public func resolveWithoutRunning(_ text: String) -> Resolution? {
        commandResolver?.resolve(text)
    }
}
