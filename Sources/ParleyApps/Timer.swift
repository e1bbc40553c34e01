import Foundation
import ParleyIntents

/// The running timer, kept in the app's data store.
struct RunningTimer: Codable {
    var end: Date
    var seconds: Int
    static let key = "timer.current"

    /// The running timer, with its end as the runtime will ring it: the
    /// announcement's due time is kept on the monotonic clock, so it stays
    /// right when the wall clock jumps (a board setting its clock by NTP after
    /// boot); the stored end is only used when nothing is scheduled.
    static func load(_ context: IntentContext) async throws -> RunningTimer? {
        guard let data = try await context.appData.value(app: context.app, key: key) else { return nil }
        var timer = try JSONDecoder().decode(RunningTimer.self, from: data)
        if let due = await context.scheduledDate(id: announcementID) { timer.end = due }
        return timer.end > context.now ? timer : nil
    }

    static let announcementID = "timer"
}

/// The running timer as people name it: "the ten minute timer", "the one
/// and a half hour timer", or by its length where no adjective reads well:
/// "the timer for one hour and five minutes".
func timerName(_ seconds: Int) -> String {
    SpokenDuration.adjective(seconds).map { "the \($0) timer" } ?? "the timer for \(SpokenDuration.describe(seconds))"
}

/// Starts a timer; when it ends the device chimes and says so.
public struct StartTimer: AppIntent {
    public static let title = "Start a timer"
    public static let category = IntentCategory.set
    public static let parameterSummary = "Start a {duration} timer"

    @Parameter(title: "Duration", prompt: "For how long?",
               bounds: ParameterBounds(minimum: 1, maximum: 12 * 3600 + 1800, belowMinimum: "A timer needs at least one second.",
                                       aboveMaximum: "Timers can run for twelve hours at most."))
    public var duration: SpokenDuration

    public init() {}

    public func perform(context: IntentContext) async throws -> IntentResult {
        let timer = RunningTimer(end: context.now + Double(duration.seconds), seconds: duration.seconds)
        try await context.appData.setValue(try JSONEncoder().encode(timer), app: context.app, key: RunningTimer.key)
        let spoken = SpokenDuration.describe(duration.seconds)
        await context.schedule(id: RunningTimer.announcementID, at: timer.end, announcement: "\(capitalisedFirst(timerName(duration.seconds))) is done.")
        return IntentResult(dialog: "\(capitalisedFirst(spoken)), starting now.",
                            output: ["end": .date(timer.end), "duration": .duration(Double(duration.seconds))])
    }
}

/// Says how much time is left.
public struct TimeLeft: AppIntent {
    public static let title = "Time left"
    public static let category = IntentCategory.get
    public init() {}

    public func perform(context: IntentContext) async throws -> IntentResult {
        guard let timer = try await RunningTimer.load(context) else { return IntentResult(dialog: "No timer is running.") }
        let left = Int(timer.end.timeIntervalSince(context.now).rounded(.up))
        return IntentResult(dialog: "\(capitalisedFirst(SpokenDuration.describe(left))) left.",
                            detail: "\(capitalisedFirst(timerName(timer.seconds))) ends then.",
                            output: ["remaining": .duration(Double(left))])
    }
}

/// Cancels the running timer.
public struct CancelTimer: AppIntent {
    public static let title = "Cancel the timer"
    public static let category = IntentCategory.set
    public init() {}

    public func perform(context: IntentContext) async throws -> IntentResult {
        guard let timer = try await RunningTimer.load(context) else { return IntentResult(dialog: "No timer is running.") }
        try await context.appData.removeValue(app: context.app, key: RunningTimer.key)
        await context.cancelScheduled(id: RunningTimer.announcementID)
        return IntentResult(dialog: "Timer cancelled.", detail: "\(capitalisedFirst(timerName(timer.seconds))) will not ring.")
    }
}

public struct TimerApp: ParleyApp {
    public init() {}
    public let identifier = "Timer"
    public let name = "Timer"
    public let synonyms = ["the timer", "kitchen timer"]
    public var intents: [any AppIntent.Type] { [StartTimer.self, TimeLeft.self, CancelTimer.self] }
    public var shortcuts: [AppShortcut] {
        [
            AppShortcut(intent: StartTimer.self, phrases: [
                "start a {duration} timer", "set a {duration} timer", "set a timer for {duration}",
                "start a timer for {duration}", "start a timer", "set a timer",
            ], shortTitle: "Start a timer"),
            AppShortcut(intent: TimeLeft.self, phrases: [
                "how much time is left on the timer", "how much time is left on the {app}", "how long is left on the timer",
            ], shortTitle: "Tell the time left"),
            AppShortcut(intent: CancelTimer.self, phrases: ["cancel the timer", "stop the timer", "cancel the {app}"],
                        shortTitle: "Cancel the timer"),
        ]
    }
}
