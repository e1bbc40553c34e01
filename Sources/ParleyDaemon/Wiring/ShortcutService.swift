import Foundation
import ParleyControl
import ParleyCore

/// The `ShortcutPort` of parleyd: the shortcut folder (`<state>/shortcuts`)
/// and the engine that runs them.
public struct ShortcutService: ShortcutPort, CustomStringConvertible, CustomDebugStringConvertible {
    let folder: ShortcutFolder
    let bridge: EngineBridge

    public func list() async -> [PersonalShortcut] {
        // The bridge's registry, not one taken at start: external apps come and go.
        let registry = bridge.registry
        return folder.loaded.shortcuts.map { shortcut in
            var described = Self.describe(shortcut, registry: registry)
            described.enabled = !folder.isOff(shortcut.name)
            return described
        }
    }

    public func setEnabled(_ name: String, enabled: Bool) async throws -> Bool {
        try await folder.setEnabled(name, enabled)
    }

    public func run(_ name: String) async -> HeardText? { await bridge.runShortcut(name) }

    public func add(file: String) async throws -> String {
        let shortcut = try await folder.add(file: file)
        // Loaded at once (the watcher would also notice), so `list` shows it on return.
        await folder.load()
        return shortcut.name
    }

    public func remove(_ name: String) async -> Bool {
        guard folder.remove(name: name) else { return false }
        await folder.load()
        return true
    }

    // Services are logged by description at start (debug): name the folder,
    // not every app, intent and option of the registry (hundreds of kilobytes).
    public var description: String { "ShortcutService(folder: \(folder.directory))" }
    public var debugDescription: String { description }

    static func describe(_ shortcut: Shortcut, registry: AppRegistry) -> PersonalShortcut {
        PersonalShortcut(name: shortcut.name, phrases: shortcut.phrases.map(\.text), triggers: shortcut.triggers.map { trigger in
            switch trigger.trigger {
            case .button(let gesture): "button \(gesture.rawValue)"
            case .time(let time, let days):
                days.count == 7 ? "\(time) every day" : "\(time) " + days.sorted().map(\.shortName).joined(separator: " ")
            case .input(let name, let edge): "input \(name) \(edge.rawValue)"
            }
        }, summary: ParleyCore.ShortcutSummary.describe(shortcut, registry: registry), file: shortcut.file)
    }
}
