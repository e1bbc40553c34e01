/// How a run was started. The raw values are what donations store and
/// `performed` lines print, so they never change.
public enum Trigger: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case voice
    case button
    case shortcut
    case automation
    case console
    /// An app donating on its own (`context.donate`), not a run of the engine.
    case app
    public var description: String { rawValue }
}

/// The sounds the device plays. Raw values are the names printed by the
/// console (`sound: chime`).
public enum EngineSound: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A timer or an announcement is due.
    case chime
    /// The wake word alone was heard: a window to speak opens.
    case wake
    /// A volume button was pressed: one short tick at the new level.
    case volume
    public var description: String { rawValue }
}

/// What a double press does when nothing is open (board `double-press:`).
/// An action of its own, so "repeat" is never English text fed back through
/// the resolver, which could bind it to an app phrase.
public enum DoublePressAction: Sendable, Hashable {
    case nothing
    /// Says the last line again.
    case repeatLast
    /// "What can I say".
    case listShortcuts
    /// Runs a phrase (a shortcut's name or a custom phrase) as if spoken.
    case run(phrase: String)
}
