import Foundation

/// The shortcuts of a folder (or a list of files), loaded and checked
/// together: each file alone (`ShortcutLoader`, `ShortcutValidator`), then
/// against each other (unique names, phrases that clash, loops of shortcuts
/// running each other, shortcuts that run one that did not load). A file with
/// a problem is left out; the others load.
public struct ShortcutLibrary: Sendable {
    /// The shortcuts that loaded, by name order.
    public private(set) var shortcuts: [Shortcut]
    /// Every problem, in file, line and column order.
    public private(set) var problems: [ShortcutProblem]

    public init(shortcuts: [Shortcut] = [], problems: [ShortcutProblem] = []) {
        self.shortcuts = shortcuts
        self.problems = problems
    }

    public func shortcut(named name: String) -> Shortcut? {
        shortcuts.first { $0.name == name } ?? shortcuts.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The `.yaml` / `.yml` files of a folder, sorted (a missing folder has none).
    public static func files(in directory: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) && !$0.hasPrefix(".") }
            .sorted().map { (directory as NSString).appendingPathComponent($0) }
    }

    /// Loads every shortcut file of a folder.
    public static func load(directory: String, environment: ShortcutEnvironment) -> ShortcutLibrary {
        load(files: files(in: directory), environment: environment)
    }

    public static func load(files: [String], environment: ShortcutEnvironment) -> ShortcutLibrary {
        let parsed = files.map { file -> (String, Result<Shortcut, ShortcutFileError>) in
            do throws(ShortcutFileError) { return (file, .success(try ShortcutLoader.load(file: file))) } catch { return (file, .failure(error)) }
        }
        return check(parsed, environment: environment)
    }

    /// Checks parsed files together; the order of `parsed` decides which of
    /// two files with the same name or phrase loads (the first).
    public static func check(_ parsed: [(file: String, result: Result<Shortcut, ShortcutFileError>)],
                             environment: ShortcutEnvironment) -> ShortcutLibrary {
        var problems: [ShortcutProblem] = []
        var candidates: [Shortcut] = []
        for (_, result) in parsed {
            switch result {
            case .success(let shortcut): candidates.append(shortcut)
            case .failure(let error): problems.append(contentsOf: error.problems)
            }
        }
        // Names first, so every other check knows which shortcuts exist.
        var byName: [String: Shortcut] = [:]
        var named: [Shortcut] = []
        for shortcut in candidates {
            let key = shortcut.name.lowercased()
            if let other = byName[key] {
                problems.append(ShortcutProblem(shortcut.nameLocation, "another shortcut is already named '\(other.name)' (\(other.nameLocation))"))
                continue
            }
            byName[key] = shortcut
            named.append(shortcut)
        }
        let names = Set(named.map(\.name))
        let validator = ShortcutValidator(environment: environment)
        var valid: [Shortcut] = []
        var phraseOwners: [[String]: (String, SourceLocation)] = [:]
        for shortcut in named {
            var own = validator.problems(shortcut, shortcutNames: names)
            for phrase in shortcut.phrases {
                if let (owner, location) = phraseOwners[phrase.words], owner != shortcut.name {
                    own.append(ShortcutProblem(phrase.location, "the phrase '\(phrase.text)' is already the shortcut '\(owner)''s (\(location))"))
                }
            }
            if own.isEmpty {
                for phrase in shortcut.phrases where phraseOwners[phrase.words] == nil { phraseOwners[phrase.words] = (shortcut.name, phrase.location) }
                valid.append(shortcut)
            } else {
                problems.append(contentsOf: own)
            }
        }
        let (loaded, graphProblems) = removeLoopsAndDangling(valid)
        problems.append(contentsOf: graphProblems)
        return ShortcutLibrary(shortcuts: loaded.sorted { $0.name < $1.name }, problems: problems.sorted { $0.location < $1.location })
    }

    /// Leaves out shortcuts on a loop of `shortcut:` actions, then, until
    /// nothing changes, those that run a shortcut that was left out.
    static func removeLoopsAndDangling(_ shortcuts: [Shortcut]) -> ([Shortcut], [ShortcutProblem]) {
        var problems: [ShortcutProblem] = []
        let byName = Dictionary(shortcuts.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var removed = Set<String>()
        for shortcut in shortcuts {
            // A path back to this shortcut through the ones it runs, found depth first.
            for (first, location) in shortcut.shortcutsRun where first != shortcut.name {
                if let path = pathBack(from: first, to: shortcut.name, byName: byName) {
                    let loop = ([shortcut.name] + path).joined(separator: " → ")
                    problems.append(ShortcutProblem(location, "runs '\(first)', which leads back to '\(shortcut.name)' (\(loop)); shortcuts may not run each other in a loop"))
                    removed.insert(shortcut.name)
                    break
                }
            }
        }
        var changed = true
        while changed {
            changed = false
            for shortcut in shortcuts where !removed.contains(shortcut.name) {
                if let (name, location) = shortcut.shortcutsRun.first(where: { removed.contains($0.name) }) {
                    problems.append(ShortcutProblem(location, "runs the shortcut '\(name)', which did not load (see its problems)"))
                    removed.insert(shortcut.name)
                    changed = true
                }
            }
        }
        return (shortcuts.filter { !removed.contains($0.name) }, problems)
    }

    /// The names from `start` to `goal` following `shortcut:` actions, or nil.
    static func pathBack(from start: String, to goal: String, byName: [String: Shortcut]) -> [String]? {
        var visited = Set<String>()
        func visit(_ name: String) -> [String]? {
            if name == goal { return [name] }
            guard visited.insert(name).inserted, let shortcut = byName[name] else { return nil }
            for (next, _) in shortcut.shortcutsRun {
                if let rest = visit(next) { return [name] + rest }
            }
            return nil
        }
        return visit(start)
    }
}
