import ParleyControl
import ParleyCore

extension EngineBridge {
    /// `parley`'s `resolve` request: what a typed phrase would start (wake
    /// words stripped as `say` strips them), in words; never runs it.
    public func tryResolve(_ text: String) async -> PhraseResolution {
        let words = withoutWake(text)
        guard let resolution = await engine.resolveWithoutRunning(words) else {
            return PhraseResolution(phrase: words, matched: false, target: "no phrase matches", values: [:])
        }
        let target: String
        switch resolution.target {
        case .intent(let app, let intent, _): target = "\(app).\(intent)"
        case .customPhrase(let id): target = "custom phrase \(id)"
        case .builtin(let builtin): target = "built-in \(builtin)"
        case .shortcut(let name): target = "shortcut \(name)"
        case .answer: target = "an answer"
        }
        return PhraseResolution(phrase: resolution.words.joined(separator: " "), matched: true, target: target,
                                values: resolution.values)
    }
}
