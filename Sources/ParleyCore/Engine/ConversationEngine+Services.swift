import Foundation

/// What app code reaches while it runs: its `IntentContext`, donations that
/// count only while its run is current, and announcements scheduled on the
/// monotonic clock.
extension ConversationEngine {
    nonisolated func context(app: String) -> IntentContext {
        IntentContext(app: app, now: clock.now, appData: stores.appData, services: EngineServices(engine: self, run: nil))
    }

    /// The context of a run's app code: what it donates counts only while the run is current.
    nonisolated func context(for run: Run) -> IntentContext {
        IntentContext(app: run.app.identifier, now: clock.now, appData: stores.appData,
                      services: EngineServices(engine: self, run: run.id))
    }

    /// Whether app code of `run` may still act for it (nil: not tied to a run).
    func accepts(_ run: RunID?) -> Bool {
        guard let run else { return true }
        return isCurrent(run)
    }

    func schedule(app: String, id: String, at date: Date, text: String) {
        announcements.schedule(Announcements.Entry(app: app, id: id, due: clock.instant(at: date), text: text))
    }

    func cancelScheduled(app: String, id: String) {
        announcements.cancel(app: app, id: id)
    }

    /// When a scheduled announcement is due, as a wall-clock date reckoned now.
    func scheduledDate(app: String, id: String) -> Date? {
        announcements.due(app: app, id: id).map { clock.date(at: $0) }
    }
}


/// How apps reach the engine while they run.
struct EngineServices: IntentServices {
    let engine: ConversationEngine
    /// The run whose app code holds these services, if any.
    let run: RunID?

    func donate(app: String, _ request: DonationRequest) async throws {
        // A run cancelled meanwhile donates nothing, even from its own code.
        guard await engine.accepts(run) else { return }
        try await engine.stores.donations.record(Donation(identifier: request.identifier, groupIdentifier: request.groupIdentifier,
            app: app, intent: request.intent, parameters: request.parameters, date: engine.clock.now, trigger: Trigger.app.rawValue))
    }

    func schedule(app: String, id: String, at date: Date, announcement: String) async {
        await engine.schedule(app: app, id: id, at: date, text: announcement)
    }

    func cancelScheduled(app: String, id: String) async {
        await engine.cancelScheduled(app: app, id: id)
    }

    func scheduledDate(app: String, id: String) async -> Date? {
        await engine.scheduledDate(app: app, id: id)
    }

    func recentValues(app: String, intent: String, parameter: String, limit: Int) async -> [String] {
        let donations = (try? await engine.stores.donations.donations(app: app, intent: intent, limit: 200)) ?? []
        var seen = Set<String>()
        return donations.compactMap { $0.parameters[parameter] }.filter { seen.insert($0).inserted }.prefix(limit).map { $0 }
    }
}
