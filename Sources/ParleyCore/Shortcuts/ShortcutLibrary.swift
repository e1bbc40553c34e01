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

    /// Shortcuts loaded at most: each adds its phrases to every grammar and
    /// its triggers to the timers, so a folder filled by a runaway script
    /// must not slow every command down.
    public static let maximumShortcuts = 100

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
            case .success(let shortcut) where candidates.count >= maximumShortcuts:
                problems.append(ShortcutProblem(shortcut.nameLocation,
                    "not loaded: the device keeps at most \(maximumShortcuts) shortcuts; remove one first"))
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

    /// Leaves out shortcuts on a loop of `shortcut:` actions (the strongly
    /// connected components of the graph of `shortcut:` actions, found once
    /// with Tarjan's algorithm), then, until nothing changes, those that run
    /// a shortcut that was left out.
    static func removeLoopsAndDangling(_ shortcuts: [Shortcut]) -> ([Shortcut], [ShortcutProblem]) {
        var problems: [ShortcutProblem] = []
        let index = Dictionary(shortcuts.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        let edges = shortcuts.map { shortcut in
            shortcut.shortcutsRun.compactMap { run in index[run.name].map { (target: $0, location: run.location) } }
        }
        let component = stronglyConnectedComponents(count: shortcuts.count, edges: edges.map { $0.map(\.target) })
        var removed = Set<Int>()
        for (node, shortcut) in shortcuts.enumerated() {
            // Self-loops are reported by the validator; here loops through others.
            guard let first = edges[node].first(where: { $0.target != node && component[$0.target] == component[node] }) else { continue }
            let path = pathBack(from: first.target, to: node, edges: edges, within: component[node], component: component)
            let loop = ([node] + path).map { shortcuts[$0].name }.joined(separator: " → ")
            problems.append(ShortcutProblem(first.location, "runs '\(shortcuts[first.target].name)', which leads back to '\(shortcut.name)' (\(loop)); shortcuts may not run each other in a loop"))
            removed.insert(node)
        }
        var changed = true
        while changed {
            changed = false
            for node in shortcuts.indices where !removed.contains(node) {
                if let edge = edges[node].first(where: { removed.contains($0.target) }) {
                    problems.append(ShortcutProblem(edge.location, "runs the shortcut '\(shortcuts[edge.target].name)', which did not load (see its problems)"))
                    removed.insert(node)
                    changed = true
                }
            }
        }
        return (shortcuts.indices.filter { !removed.contains($0) }.map { shortcuts[$0] }, problems)
    }

    /// The component number of each node (Tarjan, iterative so a long chain
    /// of shortcuts cannot overflow the stack).
    static func stronglyConnectedComponents(count: Int, edges: [[Int]]) -> [Int] {
        var order = Array(repeating: -1, count: count), low = Array(repeating: 0, count: count)
        var onStack = Array(repeating: false, count: count), component = Array(repeating: -1, count: count)
        var stack: [Int] = [], counter = 0, components = 0
        for root in 0..<count where order[root] < 0 {
            var work: [(node: Int, next: Int)] = [(root, 0)]
            order[root] = counter; low[root] = counter; counter += 1
            stack.append(root); onStack[root] = true
            while let (node, next) = work.last {
                if next < edges[node].count {
                    work[work.count - 1].next += 1
                    let target = edges[node][next]
                    if order[target] < 0 {
                        order[target] = counter; low[target] = counter; counter += 1
                        stack.append(target); onStack[target] = true
                        work.append((target, 0))
                    } else if onStack[target] {
                        low[node] = min(low[node], order[target])
                    }
                    continue
                }
                work.removeLast()
                if let parent = work.last?.node { low[parent] = min(low[parent], low[node]) }
                if low[node] == order[node] {
                    while let top = stack.popLast() {
                        onStack[top] = false
                        component[top] = components
                        if top == node { break }
                    }
                    components += 1
                }
            }
        }
        return component
    }

    /// The nodes from `start` to `goal` inside one component (breadth first: the shortest loop).
    static func pathBack(from start: Int, to goal: Int, edges: [[(target: Int, location: SourceLocation)]], within: Int,
                         component: [Int]) -> [Int] {
        var previous: [Int: Int] = [start: start]
        var queue = [start], head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            if node == goal { break }
            for edge in edges[node] where component[edge.target] == within && previous[edge.target] == nil {
                previous[edge.target] = node
                queue.append(edge.target)
            }
        }
        var path = [goal], node = goal
        while node != start, let back = previous[node] { path.append(back); node = back }
        return path.reversed()
    }
}
