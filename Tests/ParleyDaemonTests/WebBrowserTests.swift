import Foundation
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// The speaker's page in a real browser: the real parleyd (simulated board,
/// the spool microphone `parley play` feeds) with the page on, on loopback,
/// driven by scripts/lib/web_browser_test.py (Selenium, headless chromium).
/// The script pairs with the spoken code, adds a shortcut with an error and
/// sees it at its line, fixes it, runs it by a recorded command, turns it off
/// and on (Try it), watches the microphone level move, turns the external app
/// Kitchen Lights off and on, changes the volume and the time zone, forgets
/// the history, revokes its pairing and is locked out; its screenshots of
/// every page are written to docs/web/.
@Suite(.serialized) struct WebBrowserTests {
    static let script = Fixtures.packageRoot.appendingPathComponent("scripts/lib/web_browser_test.py").path
    static let screenshots = Fixtures.packageRoot.appendingPathComponent("docs/web").path

    @Test func pairEditRunChangeForgetAndRevokeInChromium() async throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw TestFailure("\(tool) missing: scripts/setup.sh installs chromium and chromium-driver")
        }
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        // The recorded command: "hey" (espeak-ng), then a real recording of "can I have a light
        // roast twelve ounce coffee", the phrase of the shortcut the script adds.
        let order = EndToEndTests.firstOrder
        guard FileManager.default.fileExists(atPath: order) else { throw TestFailure("missing recording \(order)") }
        try await EndToEndTests.run("/usr/bin/espeak-ng", ["-w", dir.file("hey-raw.wav"), "hey"])
        try await EndToEndTests.run("/usr/bin/sox", [dir.file("hey-raw.wav"), "-r", "16000", "-c", "1", "-b", "16", dir.file("hey.wav")])
        try await EndToEndTests.run("/usr/bin/sox", ["-n", "-r", "16000", "-c", "1", "-b", "16", dir.file("silence.wav"), "trim", "0", "1"])
        try await EndToEndTests.run("/usr/bin/sox", [
            dir.file("silence.wav"), dir.file("hey.wav"), order, dir.file("silence.wav"), dir.file("silence.wav"),
            dir.file("command.wav"),
        ])
        // An external app, for the Apps page's handler state and its switch.
        try FileManager.default.createDirectory(atPath: dir.file("state/apps"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.packageRoot.appendingPathComponent("examples/apps/kitchen-lights").path,
                                         toPath: dir.file("state/apps/kitchen-lights"))
        let config = dir.file("parley.yaml")
        try """
            # The browser test's daemon.
            state_directory: \(dir.file("state"))
            control_socket: \(dir.file("parley.sock"))
            speech: {acoustic_model: stock}
            log_level: debug
            voice:
              rate: 175
            web:
              enabled: true
              port: 0
              listen: loopback

            """.write(toFile: config, atomically: true, encoding: .utf8)
        // The log goes to a file the script reads the spoken code from.
        let log = dir.file("parleyd.log")
        let daemon = try await ChildProcess.start(
            "/bin/sh", ["-c", "exec \"$0\" --config \"$1\" 2>\"$2\"", try Executables.url("parleyd").path, config, log])
        defer { daemon.terminate() }
        let ready = try await EndToEndTests.waitForStatus(dir.file("parley.sock")) { $0.audio.state == "running" }
        #expect(ready?.audio.state == "running")
        let url = try await offPool { () -> String? in
            for _ in 0..<400 {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if let range = text.range(of: #"web page listening url=http://127\.0\.0\.1:\d+/"#, options: .regularExpression) {
                    return String(text[range].dropFirst("web page listening url=".count))
                }
                usleep(50_000)
            }
            return nil
        }
        let page = try #require(url, "parleyd did not log the page's address")
        let browser = try await ChildProcess.run("/usr/bin/env", [
            "python3", Self.script, "--url", page, "--log", log, "--parley", try Executables.url("parley").path,
            "--socket", dir.file("parley.sock"), "--config", config, "--settings", dir.file("state/settings.yaml"),
            "--recording", dir.file("command.wav"),
            "--screenshots", Self.screenshots,
        ])
        #expect(browser.succeeded, "\(browser)\n--- daemon log ---\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let exit = try await daemon.stop()
        #expect(exit.code == 0, "\(exit)\n--- daemon log ---\n\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }
}
