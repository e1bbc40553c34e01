import Foundation
import ParleyCore

/// A response: `ok` and either `error` or the field for the command.
public struct ControlResponse: Sendable, Codable, Equatable {
    public var ok: Bool
    public var error: String?
    /// A human sentence for commands without data ("Pressed.", "Forgot 3 donations.").
    public var message: String?
    /// `say`: the lines the device spoke in answer.
    public var spoken: [String]?
    public var status: DaemonStatus?
    public var apps: [AppSummary]?
    public var shortcuts: [ShortcutSummary]?
    public var logs: [String]?
    public var donations: [Donation]?
    public var phrases: [CustomPhrase]?
    /// `shortcut-list` and `shortcut-show`: a person's shortcuts.
    public var personalShortcuts: [PersonalShortcut]?
    /// `forget`: how many donations were deleted.
    public var count: Int?
    /// `web-tokens`: the browsers paired with the page.
    public var webTokens: [WebTokenSummary]?
    /// `resolve`: what the words would start.
    public var resolution: PhraseResolution?
    /// `volume`: the level after the change.
    public var volume: VolumeReport?
    /// `app-status`: the external apps.
    public var externalApps: [ExternalAppStatus]?
    /// `kept-list`: the recordings kept for room adaptation, oldest first.
    public var keptRecordings: [KeptRecordingSummary]?
    /// The apps that come with Parley (`app-install` without a name).
    public var shippedApps: [ShippedAppSummary]?

    public init(ok: Bool = true) { self.ok = ok }

    public static func failure(_ message: String) -> ControlResponse {
        var response = ControlResponse(ok: false)
        response.error = message
        return response
    }

    public static func message(_ text: String) -> ControlResponse {
        var response = ControlResponse()
        response.message = text
        return response
    }
}


/// An app as `parley apps` lists it.
public struct AppSummary: Sendable, Codable, Equatable {
    public var name: String
    public var synonyms: [String]
    public var intents: [String]
    public var primary: Bool
    /// The identifier (`KitchenLights`, as in shortcut files); nil from an older daemon.
    public var identifier: String?
    /// True for an app from the apps folder; nil from an older daemon.
    public var external: Bool?
    public init(name: String, synonyms: [String], intents: [String], primary: Bool, identifier: String? = nil, external: Bool? = nil) {
        self.name = name
        self.synonyms = synonyms
        self.intents = intents
        self.primary = primary
        self.identifier = identifier
        self.external = external
    }
}

/// One phrase the device understands now, and what it starts.
public struct ShortcutSummary: Sendable, Codable, Equatable {
    public var phrase: String
    public var app: String
    public var intent: String
    public init(phrase: String, app: String, intent: String) {
        self.phrase = phrase
        self.app = app
        self.intent = intent
    }
}

/// A shortcut as `parley shortcuts list` and `show` print it.
public struct PersonalShortcut: Sendable, Codable, Equatable {
    public var name: String
    public var phrases: [String]
    /// "double-press", "07:30 mon tue", "input door rising".
    public var triggers: [String]
    /// Its actions in words ("Order two tomato soup for pick up, ...").
    public var summary: String
    public var file: String
    /// False while turned off (`shortcut-disable`); nil from an older daemon.
    public var enabled: Bool?
    public init(name: String, phrases: [String], triggers: [String], summary: String, file: String, enabled: Bool? = nil) {
        self.enabled = enabled
        self.name = name
        self.phrases = phrases
        self.triggers = triggers
        self.summary = summary
        self.file = file
    }
}

/// An app that comes with Parley (`app-install` without a name).
public struct ShippedAppSummary: Sendable, Codable, Equatable {
    /// Its folder name: what `app-install` takes.
    public var folder: String
    public var name: String
    /// Whether the apps folder has a folder of that name.
    public var installed: Bool
    /// Why it cannot be installed on this machine (its handler's program missing), if it cannot.
    public var problem: String?
    public init(folder: String, name: String, installed: Bool, problem: String? = nil) {
        self.folder = folder
        self.name = name
        self.installed = installed
        self.problem = problem
    }
}

/// An external app's handler as `parley apps status` and the page show it.
public struct ExternalAppStatus: Sendable, Codable, Equatable {
    public var identifier: String
    public var name: String
    /// The app's folder name in the apps folder.
    public var folder: String
    /// "running (pid 123)", "restarting: exited with status 1", "stopped", "off", "not started".
    public var state: String
    /// Restarts after a failure since it was loaded.
    public var restarts: Int
    public var enabled: Bool
    /// The last lines the handler wrote to standard error, oldest first.
    public var stderr: [String]
    public init(identifier: String, name: String, folder: String, state: String, restarts: Int, enabled: Bool, stderr: [String]) {
        self.identifier = identifier
        self.name = name
        self.folder = folder
        self.state = state
        self.restarts = restarts
        self.enabled = enabled
        self.stderr = stderr
    }
}

/// A recording kept for room adaptation (`adaptation.keep_audio`).
public struct KeptRecordingSummary: Sendable, Codable, Equatable {
    /// Its name in the kept folder ("00000012"), what deletes it.
    public var id: String
    public var words: String
    public var seconds: Double
    public var date: Date?
    public init(id: String, words: String, seconds: Double, date: Date?) {
        self.id = id
        self.words = words
        self.seconds = seconds
        self.date = date
    }
}

/// A browser paired with the web page, as `parley web tokens` lists it. The
/// token itself is never stored or shown: `id` is the start of its hash.
public struct WebTokenSummary: Sendable, Codable, Equatable {
    public var id: String
    public var created: Date
    public var lastUsed: Date
    /// The browser's own description (User-Agent), shortened.
    public var browser: String
    public init(id: String, created: Date, lastUsed: Date, browser: String) {
        self.id = id
        self.created = created
        self.lastUsed = lastUsed
        self.browser = browser
    }
}

/// What a phrase resolves to, without running it.
public struct PhraseResolution: Sendable, Codable, Equatable {
    /// The words as matched (normalised, wake words and fillers dropped).
    public var phrase: String
    public var matched: Bool
    /// "Soup Chef.OrderSoup", "shortcut Coffee break", "built-in cancel" or "no phrase matches".
    public var target: String
    /// Parameter values the phrase fixes (canonical).
    public var values: [String: String]
    public init(phrase: String, matched: Bool, target: String, values: [String: String]) {
        self.phrase = phrase
        self.matched = matched
        self.target = target
        self.values = values
    }
}

/// The speaker's volume as `parley volume` shows it.
public struct VolumeReport: Sendable, Codable, Equatable {
    /// 0...10, kept while muted.
    public var level: Int
    public var muted: Bool
    /// How the level reaches the speaker: "mixer control 'PCM' on hw:0" or
    /// "software (samples scaled)".
    public var output: String
    public init(level: Int, muted: Bool, output: String) {
        self.level = level
        self.muted = muted
        self.output = output
    }
}
