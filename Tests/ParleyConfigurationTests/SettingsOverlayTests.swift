import Foundation
import Testing

@testable import ParleyConfiguration

/// The page's settings in `<state>/settings.yaml`, laid over parley.yaml:
/// only the page's keys, checked by the same loader, parley.yaml never written.
@Suite struct SettingsOverlayTests {
    /// A parley.yaml and its state directory in a fresh folder.
    static func files(_ main: String, overlay: String?) throws -> (config: String, state: String, overlay: String, cleanUp: () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-overlay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("parley.yaml").path
        try "state_directory: \(directory.path)\n\(main)".write(toFile: config, atomically: true, encoding: .utf8)
        let overlayPath = SettingsOverlay.path(stateDirectory: directory.path)
        if let overlay { try overlay.write(toFile: overlayPath, atomically: true, encoding: .utf8) }
        return (config, directory.path, overlayPath, { try? FileManager.default.removeItem(at: directory) })
    }

    @Test func thePagesValuesWinAndTheRestIsTheFiles() throws {
        let f = try Self.files("voice:\n  name: en-us   # mine\n  volume: 100\ntime_zone: Europe/Paris\n",
                               overlay: SettingsOverlay.render([("voice.volume", "80"), ("wake.name", "\"jarvis\""), ("time_zone", "\"\"")]))
        defer { f.cleanUp() }
        let config = try ConfigLoader.load(contentsOf: f.config)
        #expect(config.voice.volume == 80 && config.voice.name == "en-us" && config.wake.name == "jarvis")
        #expect(config.timeZone == nil, "an emptied time zone is the system's, whatever parley.yaml says")
        // Without the overlay the file reads as written.
        try FileManager.default.removeItem(atPath: f.overlay)
        #expect(try ConfigLoader.load(contentsOf: f.config).voice.volume == 100)
    }

    /// The overlay holds the page's keys only: a control socket or a state
    /// directory written there is refused with the file, line and key.
    @Test func otherKeysAreRefusedWithTheirLine() throws {
        let f = try Self.files("", overlay: "voice:\n  volume: 80\ncontrol_socket: /tmp/elsewhere.sock\n")
        defer { f.cleanUp() }
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(contentsOf: f.config) }
        #expect(error?.file == f.overlay && error?.line == 3 && error?.key == "control_socket", "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test func aValueTheLoaderRefusesNamesTheOverlay() throws {
        let f = try Self.files("", overlay: "voice:\n  volume: 900\n")
        defer { f.cleanUp() }
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(contentsOf: f.config) }
        #expect(error?.file == f.overlay && error?.key == "voice.volume")
        #expect(error?.reason.contains("fix or delete \(f.overlay)") == true, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test func anOversizedOverlayIsRefusedBeforeReading() throws {
        let f = try Self.files("", overlay: String(repeating: "# padding\n", count: 1_000))
        defer { f.cleanUp() }
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(contentsOf: f.config) }
        #expect(error?.kind == .refused && error?.file == f.overlay)
    }
}
