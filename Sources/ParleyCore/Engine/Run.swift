import Foundation

/// Identifies one run of an intent, from its start to its result. A result
/// is only spoken and donated while its run is still the engine's current
/// one: a run cancelled meanwhile is over, even when another has started.
public struct RunID: Sendable, Hashable, CustomStringConvertible {
    public let value: UInt64
    public var description: String { "run-\(value)" }
}

/// How to start a run without a phrase: by app and intent identifier, with
/// canonical values and how it was triggered (a shortcut step, an
/// automation, an external caller). Missing values are asked for as after a
/// phrase.
public struct RunRequest: Sendable, Hashable {
    public var app: String
    public var intent: String
    public var values: [String: String]
    /// Values the caller settled: used as given, never re-resolved.
    public var settled: Set<String>
    public var trigger: Trigger

    public init(app: String, intent: String, values: [String: String] = [:], settled: Set<String> = [], trigger: Trigger) {
        self.app = app
        self.intent = intent
        self.values = values
        self.settled = settled
        self.trigger = trigger
    }
}

/// One intent on its way from words (or a request) to a result.
struct Run: Sendable {
    var id: RunID
    var app: AppDescription
    var descriptor: IntentDescriptor
    /// Holds the values as they are resolved and performs: a Swift intent
    /// instance or an external app's handler (`IntentImplementation`).
    var intent: any IntentRun
    /// Canonical values, proposed or resolved.
    var values: [String: String]
    /// Parameters settled by the person's answer to a list or a confirmation.
    var settled: Set<String> = []
    /// The next parameter to resolve, in declaration order.
    var index = 0
    var questions = 0
    /// Parameters the person was asked about (for the tip: a shorter phrase must carry one).
    var asked: Set<String> = []
    var trigger: Trigger
    /// The person confirmed this run with the button (not by voice).
    var confirmedWithButton = false
    /// Parameters a shortcut asks each time, with their question (nil: the parameter's own).
    var askEachTime: [String: String?] = [:]
    /// The parameter whose value the recogniser doubts (issue 49): the
    /// read-back names it first, and a "no" to the read-back asks for it
    /// again instead of dropping the whole run.
    var doubted: String?

    init(id: RunID, app: AppDescription, descriptor: IntentDescriptor, values: [String: String],
         settled: Set<String> = [], trigger: Trigger) {
        self.id = id
        self.app = app
        self.descriptor = descriptor
        self.intent = descriptor.implementation.makeRun()
        self.values = values
        self.settled = settled
        self.trigger = trigger
    }

    var key: String { "\(app.identifier).\(descriptor.identifier)" }

    /// The values that were given (empty ones are "not set").
    var givenValues: [String: String] { values.filter { !$0.value.isEmpty } }
}
