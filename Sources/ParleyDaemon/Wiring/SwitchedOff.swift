import Foundation
import ParleyIntents
import Synchronization

/// What a person turned off (a shortcut by name, an external app by its
/// identifier), kept in the state store's app data under Parley's own owner,
/// as the volume is (`VolumeSetting`), so it stays off after a restart. The
/// set is read once at start and held in memory: a check is a lock, never a
/// database read. A write returns once it is durable.
public final class SwitchedOff: Sendable {
    public static let owner = "_parley"
    private let store: any AppDataStore
    private let key: String
    private let names = Mutex<Set<String>>([])

    /// `key`: "shortcuts-off", "apps-off".
    public init(store: any AppDataStore, key: String) {
        self.store = store
        self.key = key
    }

    /// Reads the stored set; an unreadable value leaves everything on (said in the returned error).
    @discardableResult
    public func restore() async -> String? {
        do {
            guard let data = try await store.value(app: Self.owner, key: key) else { return nil }
            let stored = try JSONDecoder().decode([String].self, from: data)
            names.withLock { $0 = Set(stored) }
            return nil
        } catch {
            return "\(key): the stored list is unreadable, so everything is on: \(error)"
        }
    }

    public func contains(_ name: String) -> Bool { names.withLock { $0.contains(name) } }

    public var all: Set<String> { names.withLock { $0 } }

    /// Turns `name` off (or on again) and stores the set.
    public func set(_ name: String, off: Bool) async throws {
        let next = names.withLock { current -> Set<String> in
            if off { current.insert(name) } else { current.remove(name) }
            return current
        }
        try await store.setValue(try JSONEncoder().encode(next.sorted()), app: Self.owner, key: key)
    }
}
