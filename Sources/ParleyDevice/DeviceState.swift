// ParleyDevice: the few words the engine and the board share. ParleyHardware
// needs them without the engine (phrases, shortcuts, Yams), and ParleyCore
// needs them without libgpiod, so they live below both.

/// What the LEDs show. Raw values are the names printed by `parley chat`
/// (`led: <state>`) and used by board files.
public enum DeviceState: String, Sendable, Hashable, CaseIterable, Codable {
    case idle
    case listening
    case thinking
    case speaking
    case awaitingConfirmation = "awaiting-confirmation"
    case success
    case error
    case muted
}

extension DeviceState {
    /// Success and error are shown for one flash and then the LEDs return to
    /// the state shown before; every other state lasts until the next one.
    public var isTransient: Bool { self == .success || self == .error }
}
