import Foundation

/// The speaker's output level (issue 28): a level of 0...10 and a mute flag,
/// kept apart so "unmute" returns to the level set before. This mutes what
/// the device plays; it is not the mute switch, which stops listening.
public struct Volume: Sendable, Hashable, Codable, CustomStringConvertible {
    public static let levels = 0...10
    /// A new device's level: loud enough to hear across a room, not the maximum.
    public static let initial = Volume(level: 6)

    /// 0...10; values outside are clamped.
    public private(set) var level: Int
    public var muted: Bool

    public init(level: Int, muted: Bool = false) {
        self.level = Self.clamped(level)
        self.muted = muted
    }

    private enum CodingKeys: String, CodingKey { case level, muted }

    /// A stored level outside 0...10 (a hand-edited or damaged store) is
    /// clamped as a new one would be, never used as an index out of range.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(level: try container.decode(Int.self, forKey: .level),
                  muted: try container.decodeIfPresent(Bool.self, forKey: .muted) ?? false)
    }

    static func clamped(_ level: Int) -> Int { min(max(level, Self.levels.lowerBound), Self.levels.upperBound) }

    /// The volume after `change`. "Louder" while muted unmutes and steps up
    /// (a person saying it wants to hear more); "quieter" while muted stays
    /// muted and lowers the level kept for "unmute"; a level named outright unmutes.
    public func applying(_ change: VolumeChange) -> Volume {
        switch change {
        case .up: Volume(level: level + 1, muted: false)
        case .down: Volume(level: level - 1, muted: muted)
        case .set(let value): Volume(level: value, muted: false)
        case .mute: Volume(level: level, muted: true)
        case .unmute: Volume(level: level, muted: false)
        }
    }

    /// What is heard: 0 while muted.
    public var audibleLevel: Int { muted ? 0 : level }

    /// The level a timer alarm plays at: what is heard, but never below
    /// `floor` (voice.alarm_floor), muted or not, so an alarm is never silent.
    public func alarmLevel(floor: Int) -> Int { max(audibleLevel, Self.clamped(floor)) }

    /// The one word the device answers with: "seven", "muted".
    public var word: String { muted ? "muted" : Self.words[level] }

    static let words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]

    /// The amplitude factor for `level` when Parley scales its own samples
    /// (no mixer control): 0 at level 0, 1 at level 10 and 5 dB per step
    /// between, so each step sounds about as much louder as the last
    /// (level 1 is -45 dB, level 5 -25 dB).
    public static func gain(level: Int) -> Double {
        let level = clamped(level)
        guard level > 0 else { return 0 }
        return pow(10, -Double(levels.upperBound - level) * stepDecibels / 20)
    }

    /// Decibels between neighbouring levels of the software scale.
    public static let stepDecibels = 5.0

    public var description: String { muted ? "muted (level \(level))" : "\(level)" }
}

/// A change asked for by voice, a button, `parley volume` or the control socket.
public enum VolumeChange: Sendable, Hashable, CustomStringConvertible {
    case up
    case down
    case set(Int)
    case mute
    case unmute

    /// `parley volume` and the control protocol's spelling: up, down, mute,
    /// unmute or a level 0-10; nil for anything else.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "up": self = .up
        case "down": self = .down
        case "mute": self = .mute
        case "unmute": self = .unmute
        default:
            guard let level = Int(argument), Volume.levels.contains(level) else { return nil }
            self = .set(level)
        }
    }

    public static let spellings = "up, down, mute, unmute or a level 0-10"

    public var argument: String {
        switch self {
        case .up: "up"
        case .down: "down"
        case .mute: "mute"
        case .unmute: "unmute"
        case .set(let level): String(level)
        }
    }

    public var description: String { argument }
}

/// Where the engine takes volume changes (voice built-ins, volume buttons)
/// and brackets timer alarms. The daemon's implementation drives the mixer
/// or scales samples, persists the level and shows it on the LEDs;
/// `VolumeSetting` keeps it in a store alone (the console, tests).
public protocol VolumeControl: Sendable {
    /// The level now.
    func current() async -> Volume
    /// Applies a change, makes it durable and returns the new volume.
    @discardableResult
    func change(_ change: VolumeChange) async -> Volume
    /// A timer alarm is about to sound: output is raised to the alarm floor
    /// if it is below (or muted) before this returns.
    func alarmStarts() async
    /// The alarm's sounds are queued: output returns to the set level once
    /// they have played.
    func alarmQueued() async
}

/// The volume kept in an app-data store (SQLite in the daemon) under a name
/// no app can have (app identifiers never start with "_"). A write that
/// returned survives a power cut (StateStore's `synchronous=FULL`).
public actor VolumeSetting: VolumeControl {
    public static let owner = "_parley"
    public static let key = "volume"

    private let store: any AppDataStore
    private var cached: Volume?
    /// Why the last read or write failed (nil when it worked), for logs.
    public private(set) var lastError: String?

    public init(store: any AppDataStore) { self.store = store }

    public func current() async -> Volume {
        if let cached { return cached }
        let loaded = await load()
        cached = loaded
        return loaded
    }

    /// Reads the stored volume; the initial level when none is stored or the
    /// stored value cannot be read (said in `lastError`).
    private func load() async -> Volume {
        do {
            guard let data = try await store.value(app: Self.owner, key: Self.key) else { return .initial }
            return try JSONDecoder().decode(Volume.self, from: data)
        } catch {
            lastError = "stored volume unreadable, using level \(Volume.initial.level): \(error)"
            return .initial
        }
    }

    @discardableResult
    public func change(_ change: VolumeChange) async -> Volume {
        let next = await current().applying(change)
        await set(next)
        return next
    }

    /// Stores `volume` (synchronously: returns once it is durable).
    public func set(_ volume: Volume) async {
        cached = volume
        do {
            try await store.setValue(try JSONEncoder().encode(volume), app: Self.owner, key: Self.key)
            lastError = nil
        } catch {
            lastError = "volume not saved: \(error)"
        }
    }

    public func alarmStarts() async {}
    public func alarmQueued() async {}
}
