/// An App Shortcut (docs/spec.md §4): an intent plus phrases, usable as soon as the app
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
/// Tests/Fixtures/coffee-maker/grammar.yaml: `[a, b]` is a choice of one,
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

/// An app as the registry sees it, whatever provides it: a `ParleyApp`
/// compiled into Parley or an external app described by a manifest. Every
/// registration rule is checked on this, so both kinds obey the same rules.
public struct AppDescription: Sendable {
    public struct Shortcut: Sendable {
        public var intent: IntentDescriptor
        public var phrases: [String]
        public var shortTitle: String
        public init(intent: IntentDescriptor, phrases: [String], shortTitle: String) {
            self.intent = intent
            self.phrases = phrases
            self.shortTitle = shortTitle
        }
    }
    public struct Template: Sendable {
        public var intent: IntentDescriptor
        public var pattern: String
        public init(intent: IntentDescriptor, pattern: String) {
            self.intent = intent
            self.pattern = pattern
        }
    }

    public var identifier: String
    public var name: String
    public var synonyms: [String]
    public var intents: [IntentDescriptor]
    public var shortcuts: [Shortcut]
    public var templates: [Template]
    /// True for an app whose handler runs outside Parley (an apps folder).
    public var isExternal: Bool

    public init(identifier: String, name: String, synonyms: [String] = [], intents: [IntentDescriptor],
                shortcuts: [Shortcut], templates: [Template] = [], isExternal: Bool) {
        self.identifier = identifier
        self.name = name
        self.synonyms = synonyms
        self.intents = intents
        self.shortcuts = shortcuts
        self.templates = templates
        self.isExternal = isExternal
    }

    /// A Swift app, its intents described by reflection.
    public init(_ app: any ParleyApp) {
        var described: [String: IntentDescriptor] = [:]
        func descriptor(_ type: any AppIntent.Type) -> IntentDescriptor {
            if let known = described[type.identifier] { return known }
            let new = IntentDescriptor(type)
            described[type.identifier] = new
            return new
        }
        let intents = app.intents.map(descriptor)
        self.init(identifier: app.identifier, name: app.name, synonyms: app.synonyms, intents: intents,
                  shortcuts: app.shortcuts.map { Shortcut(intent: descriptor($0.intent), phrases: $0.phrases, shortTitle: $0.shortTitle) },
                  templates: app.templates.map { Template(intent: descriptor($0.intent), pattern: $0.pattern) },
                  isExternal: false)
    }

    /// The name and its synonyms: every way of naming the app.
    public var allNames: [String] { [name] + synonyms }

    public func intent(_ identifier: String) -> IntentDescriptor? { intents.first { $0.identifier == identifier } }
}
