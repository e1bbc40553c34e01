import Foundation
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The inotify watcher behind the shortcut folder: real files in a real
/// directory, batches read from the stream.
@Suite struct DirectoryWatcherTests {
    /// Reads batches until `names` have all been seen; a hung watcher ends the
    /// wait after a generous limit instead of hanging the suite.
    func collect(_ watcher: DirectoryWatcher, until names: Set<String>) async -> [DirectoryChange] {
        await withTaskGroup(of: [DirectoryChange]?.self) { group in
            group.addTask {
                var batches: [DirectoryChange] = []
                var seen = Set<String>()
                for await change in watcher.changes {
                    batches.append(change)
                    seen.formUnion(change.names)
                    if names.isSubset(of: seen) { break }
                }
                return batches
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            watcher.stop()
            return first ?? []
        }
    }

    func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aWrittenFileAndARemovedFileAreReported() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try write("old", to: dir.file("old.yaml"))
        let watcher = try DirectoryWatcher(directory: dir.path, quietPeriod: .milliseconds(50))
        watcher.start()
        try write("name: Lunch\n", to: dir.file("lunch.yaml"))
        try FileManager.default.removeItem(atPath: dir.file("old.yaml"))
        let batches = await collect(watcher, until: ["lunch.yaml", "old.yaml"])
        #expect(batches.reduce(into: Set<String>()) { $0.formUnion($1.names) } == ["lunch.yaml", "old.yaml"])
        #expect(batches.allSatisfy { !$0.rescan })
    }

    @Test func aRenameIntoTheDirectoryIsReportedUnderItsNewName() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let outside = try TemporaryDirectory()
        defer { outside.remove() }
        try write("name: Tea\n", to: outside.file("tea.tmp"))
        let watcher = try DirectoryWatcher(directory: dir.path, quietPeriod: .milliseconds(50))
        watcher.start()
        try FileManager.default.moveItem(atPath: outside.file("tea.tmp"), toPath: dir.file("tea.yaml"))
        let batches = await collect(watcher, until: ["tea.yaml"])
        #expect(batches.flatMap(\.names) == ["tea.yaml"])
    }

    @Test func manyChangesInABurstArriveAsFewerBatchesWithNothingLost() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // A long quiet period: the burst is written well within it.
        let watcher = try DirectoryWatcher(directory: dir.path, quietPeriod: .milliseconds(500))
        watcher.start()
        let names = Set((0..<40).map { "s\($0).yaml" })
        for name in names.sorted() { try write("name: \(name)\n", to: dir.file(name)) }
        let batches = await collect(watcher, until: names)
        #expect(batches.reduce(into: Set<String>()) { $0.formUnion($1.names) } == names)
        #expect(batches.count < names.count / 2)
    }

    @Test func aReaderThatFallsBehindGetsEveryNameWithinTheBound() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let watcher = try DirectoryWatcher(directory: dir.path, quietPeriod: .milliseconds(10), capacity: 1)
        watcher.start()
        // Nobody reads while files come one by one, each after a quiet period.
        var names = Set<String>()
        for index in 0..<6 {
            let name = "late\(index).yaml"
            names.insert(name)
            try write("x", to: dir.file(name))
            try await Task.sleep(for: .milliseconds(40))
        }
        let batches = await collect(watcher, until: names)
        #expect(batches.reduce(into: Set<String>()) { $0.formUnion($1.names) } == names)
        // One batch buffered plus the merged remainder (two, if the thread was
        // starved while the reader started): never one per file.
        #expect(batches.count <= 3)
    }

    @Test func stopEndsTheStreamAndCanBeCalledTwice() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let watcher = try DirectoryWatcher(directory: dir.path)
        watcher.start()
        watcher.stop()
        watcher.stop()
        var count = 0
        for await _ in watcher.changes { count += 1 }
        #expect(count == 0)
        let never = try DirectoryWatcher(directory: dir.path)
        never.stop()
        for await _ in never.changes { count += 1 }
        #expect(count == 0)
    }

    @Test func removingTheDirectoryEndsTheStreamAskingForARescan() async throws {
        let dir = try TemporaryDirectory()
        let watcher = try DirectoryWatcher(directory: dir.path, quietPeriod: .milliseconds(20))
        watcher.start()
        dir.remove()
        var last: DirectoryChange?
        for await change in watcher.changes { last = change }
        #expect(last?.rescan == true)
        watcher.stop()
    }

    @Test func aMissingDirectoryIsRefusedNamingIt() throws {
        let error = #expect(throws: DirectoryWatcherError.self) {
            try DirectoryWatcher(directory: "/nonexistent/parley-shortcuts")
        }
        #expect(error?.description == "cannot watch '/nonexistent/parley-shortcuts': it is not an existing directory")
    }
}
