/// An App Shortcut (SPEC 4): an intent plus phrases, usable as soon as the app
/// is installed. In a phrase, `{app}` stands for the app's name or one of its
/// synonyms and `{name}` for a parameter whose values form a finite list.
public struct AppShortcut: Sendable {
    public var intent: any AppIntent.Type
    public var phrases: [String]
    public var shortTitle: String

    public init(intent: any AppIntent.Type, phrases: [String], shortTitle: String) {
        self.intent = intent
        self.phrases = phrases
        self.shortTitle = shortTitle
    }
}

/// A rich command template of a primary app, in the notation of
/// ../shared/data/coffee-maker/grammar.yaml: `[a, b]` is a choice of one,
/// `(a)` is optional, `$list:binding` is a value of the parameter `list`
/// bound to the parameter `binding`; other words are literal.
public struct CommandTemplate: Sendable {
    public var intent: any AppIntent.Type
    public var pattern: String

    public init(intent: any AppIntent.Type, pattern: String) {
        self.intent = intent
        self.pattern = pattern
    }
}

/// A provider of intents: a Swift module compiled into Parley.
public protocol ParleyApp: Sendable {
    /// Stable identifier without spaces ("SoupChef"), used in donations and `performed:` lines.
    var identifier: String { get }
    /// The name people say ("Soup Chef").
    var name: String { get }
    var synonyms: [String] { get }
    var intents: [any AppIntent.Type] { get }
    /// At most ten.
    var shortcuts: [AppShortcut] { get }
    /// Used only when this app is the device's primary app.
    var templates: [CommandTemplate] { get }
}

extension ParleyApp {
    public var synonyms: [String] { [] }
    public var templates: [CommandTemplate] { [] }
    /// The name and its synonyms: every way of naming the app.
    public var allNames: [String] { [name] + synonyms }
}
