import Foundation
@testable import ParleyExternal
import Testing

/// Where the apps that come with Parley are found, and what they are.
@Suite struct ShippedAppsTests {
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theInstalledFolderComesFirstThenTheCheckoutTheBinaryWasBuiltIn() throws {
        let installed = try AppFolder("apps")
        defer { installed.remove() }
        let binary = Self.checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/debug/parley").path
        // An empty installed folder counts as none (a package removed, its folder left).
        #expect(ShippedApps.folder(installed: installed.url.path, executable: binary)
            == Self.checkout.appendingPathComponent("examples/apps"))
        try FileManager.default.createDirectory(at: installed.url.appendingPathComponent("home-assistant"), withIntermediateDirectories: true)
        #expect(ShippedApps.folder(installed: installed.url.path, executable: binary)?.path == installed.url.path)
        // Installed elsewhere, no package: none.
        #expect(ShippedApps.folder(installed: "/nonexistent/apps", executable: "/usr/bin/parley") == nil)
    }

    @Test func theExamplesAreListedByFolderWithTheirManifestsNames() {
        let entries = ShippedApps.entries(in: Self.checkout.appendingPathComponent("examples/apps"))
        #expect(entries == [.init(folder: "home-assistant", name: "Home Assistant"), .init(folder: "kitchen-lights", name: "Kitchen Lights"),
                            .init(folder: "shopping-list", name: "Shopping List")])
    }

    /// An app whose handler's program is missing here (python3 on a device
    /// without it) is still listed, under its folder name, with why.
    @Test func anAppThatCannotLoadHereIsListedWithTheReason() throws {
        let shipped = try AppFolder("apps")
        defer { shipped.remove() }
        let examples = Self.checkout.appendingPathComponent("examples/apps/kitchen-lights")
        let copy = shipped.url.appendingPathComponent("kitchen-lights")
        try FileManager.default.copyItem(at: examples, to: copy)
        let manifest = copy.appendingPathComponent("manifest.yaml")
        try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "handler: [python3, handler.py]",
                                                                              with: "handler: [no-such-python, handler.py]")
            .write(to: manifest, atomically: true, encoding: .utf8)
        #expect(ShippedApps.entries(in: shipped.url) == [
            .init(folder: "kitchen-lights", name: "kitchen-lights",
                  problem: "the handler program 'no-such-python' is not on the PATH; write ./no-such-python for a program in the app folder"),
        ])
    }

    /// The copy keeps contents and the executable bit, goes into subfolders,
    /// and leaves symbolic links out (nothing outside the app is reached).
    @Test func anAppIsCopiedWithItsModesAndWithoutLinks() throws {
        let source = try AppFolder("source")
        defer { source.remove() }
        try source.write("handler.sh", "#!/bin/sh\necho hi\n", executable: true)
        try source.write("data.txt", "milk\n")
        try FileManager.default.createDirectory(at: source.url.appendingPathComponent("lib"), withIntermediateDirectories: true)
        try "x = 1\n".write(to: source.url.appendingPathComponent("lib/util.py"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: source.url.appendingPathComponent("passwd").path, withDestinationPath: "/etc/passwd")
        let target = source.url.deletingLastPathComponent().appendingPathComponent("copy")
        try ExternalAppsHost.copyFolder(source.url, to: target)
        let files = FileManager.default
        #expect(try files.contentsOfDirectory(atPath: target.path).sorted() == ["data.txt", "handler.sh", "lib"])
        #expect(files.isExecutableFile(atPath: target.appendingPathComponent("handler.sh").path))
        #expect(!files.isExecutableFile(atPath: target.appendingPathComponent("data.txt").path))
        #expect(try String(contentsOf: target.appendingPathComponent("lib/util.py"), encoding: .utf8) == "x = 1\n")
        #expect(try String(contentsOf: target.appendingPathComponent("handler.sh"), encoding: .utf8) == "#!/bin/sh\necho hi\n")
    }
}
