import Foundation
import Logging
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The daemon's shortcut folder: loaded at start, reloaded when files are
/// added, changed or removed (inotify), `add` checks before copying.
@Suite struct ShortcutFolderTests {
    static let environment = ShortcutEnvironment(registry: try! AppRegistry(apps: BundledApps.all))

    func folder(_ dir: TemporaryDirectory, applied: AsyncStream<ShortcutLibrary>.Continuation) -> ShortcutFolder {
        ShortcutFolder(directory: dir.file("shortcuts"), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                       environment: { Self.environment }, apply: { applied.yield($0) })
    }

    func write(_ text: String, _ path: String) throws { try text.write(toFile: path, atomically: true, encoding: .utf8) }

    @Test func filesAddedChangedAndRemovedAreNoticedWithoutARestart() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (stream, continuation) = AsyncStream.makeStream(of: ShortcutLibrary.self)
        let folder = folder(dir, applied: continuation)
        let running = Task { try await folder.run() }
        defer { running.cancel() }
        var libraries = stream.makeAsyncIterator()
        let first = await libraries.next()
        #expect(first?.shortcuts.isEmpty == true)
        try write("name: Lunch\nphrases: [lunch time]\nactions: [{speak: Soup.}]\n", dir.file("shortcuts/lunch.yaml"))
        let second = await libraries.next()
        #expect(second?.shortcuts.map(\.name) == ["Lunch"])
        try write("name: Lunch\nactions: [{run: Nope.Never}]\n", dir.file("shortcuts/lunch.yaml"))
        let third = await libraries.next()
        #expect(third?.shortcuts.isEmpty == true)
        #expect(third?.problems.map(\.reason) == ["there is no app 'Nope'; installed: CoffeeMaker, SoupChef, Timer, Notes"])
        try FileManager.default.removeItem(atPath: dir.file("shortcuts/lunch.yaml"))
        let fourth = await libraries.next()
        #expect(fourth?.shortcuts.isEmpty == true && fourth?.problems.isEmpty == true)
    }

    @Test func addChecksTheFileFirstAndRemoveDeletesByName() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let (_, continuation) = AsyncStream.makeStream(of: ShortcutLibrary.self)
        let folder = folder(dir, applied: continuation)
        await folder.load()
        try write("name: Lunch Time!\nactions: [{speak: Soup.}]\n", dir.file("mine.yaml"))
        let added = try await folder.add(file: dir.file("mine.yaml"))
        #expect(added.name == "Lunch Time!")
        #expect(FileManager.default.fileExists(atPath: dir.file("shortcuts/lunch-time.yaml")))
        try write("name: Broken\nactions: [{shortcut: Nowhere}]\n", dir.file("broken.yaml"))
        let error = await #expect(throws: ShortcutFileError.self) { try await folder.add(file: dir.file("broken.yaml")) }
        #expect(error?.description == "\(dir.file("broken.yaml")):2:11: there is no shortcut named 'Nowhere'; known: Lunch Time!")
        #expect(ShortcutLibrary.files(in: dir.file("shortcuts")).count == 1)
        #expect(folder.remove(name: "lunch time!"))
        #expect(!folder.remove(name: "Lunch Time!"))
        #expect(ShortcutLibrary.files(in: dir.file("shortcuts")).isEmpty)
    }
}
