import Foundation

/// A command heard with nothing open: a built-in, a shortcut or an intent run.
extension ConversationEngine {
    /// `doubted`: the parameter the recogniser doubts, named in the run's
    /// read-back (`Run.doubted`); `reasking`: a parameter whose heard value
    /// the person said was wrong, asked for again.
    func command(_ text: String, trigger: Trigger, doubted: String? = nil, reasking: String? = nil) async {
        guard let resolution = commandResolver?.resolve(text) else {
            await log("not understood: \(text)")
            return
        }
        await setLED(.listening)
        await setLED(.thinking)
        switch resolution.target {
        case .builtin(let builtin):
            await run(builtin, values: resolution.values)
        case .shortcut(let name):
            await log("resolved \(resolution.ruleID)")
            await runShortcut(named: name, trigger: .shortcut)
        case .intent(let appID, let intentID, _):
            guard let app = registry.app(appID), let descriptor = registry.descriptor(app: appID, intent: intentID) else {
                await log("no intent \(appID).\(intentID)")
                await rest()
                return
            }
            var run = Run(id: nextRunID(), app: app, descriptor: descriptor, values: resolution.values, trigger: trigger)
            run.doubted = doubted
            if let reasking { run = Self.reasking(reasking, of: run) }
            await log("resolved \(resolution.ruleID) \(resolution.values)")
            await resolve(run)
        case .customPhrase, .answer:
            await rest()
        }
    }
}
