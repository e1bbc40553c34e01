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
}
