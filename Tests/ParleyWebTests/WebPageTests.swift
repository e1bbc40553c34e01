import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ParleyStore
import ParleyTestKit
import Testing

@testable import ParleyWeb

/// The page through HTTP (Hummingbird's router test client) over the real
/// control handler and state store: pairing, the forgery, origin, size and
/// path rules, and a revoked browser locked out.
@Suite struct WebPageTests {
    /// A page over a DaemonController with a real store; the code is "spoken"
    /// into a recording sink, as the engine bridge would say it.
    struct Fixture {
        let directory: URL
        let page: WebPage
        let sink = RecordingSink()
        let configFile: URL
        let components: DaemonComponents
        let store: StateStore

        /// `apps`: folders of examples/apps copied into the apps folder first.
        init(apps: [String] = [], microphoneLevel: (@Sendable () -> Int)? = nil, levelInterval: Duration = .milliseconds(250),
             pairing: WebPage.PairingMode = .spoken) async throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-webpage-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configFile = directory.appendingPathComponent("parley.yaml")
            try "# mine\nvoice:\n  name: en-us   # the voice\n  volume: 100\n".write(to: configFile, atomically: true, encoding: .utf8)
            var config = ParleyConfig()
            config.stateDirectory = directory.path
            // The components parleyd wires (engine, shortcut folder), without audio in.
            config.audio.capture = .file("missing.wav")
            let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("examples/apps")
            for app in apps {
                try FileManager.default.createDirectory(at: URL(fileURLWithPath: config.appsFolderPath), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: examples.appendingPathComponent(app),
                                                 to: URL(fileURLWithPath: config.appsFolderPath).appendingPathComponent(app))
            }
            store = try StateStore(directory: directory.path)
            var components = try await Wiring.components(config: config, store: store, logger: Logger(label: "test"))
            components.services = []
            self.components = components
            let controller = DaemonController(
                config: config, configFile: configFile.path, store: store, components: components,
                logs: LogRing(capacity: 50), logger: Logger(label: "test"))
            let sink = self.sink
            page = WebPage(
                handler: controller, webDirectory: directory.appendingPathComponent("web"), configFile: configFile.path,
                machineName: "speaker", announce: { await sink.emit(.spoke($0)) }, logger: Logger(label: "test"),
                live: LiveSettings(components: components), microphoneLevel: microphoneLevel, levelInterval: levelInterval,
                pairing: pairing)
        }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }

        /// The page's settings (``SettingsOverlay``): parley.yaml itself is never written.
        var overlayText: String { (try? String(contentsOf: directory.appendingPathComponent("settings.yaml"), encoding: .utf8)) ?? "" }

        /// The configuration as parleyd would read it now: the file with the page's settings over it.
        func loaded() throws -> ParleyConfig { try ConfigLoader.load(contentsOf: configFile.path, stateDirectory: directory.path) }

        var application: some ApplicationProtocol { Application(router: page.router()) }
    }

    static let origin: HTTPFields = [.origin: "http://localhost", .contentType: "application/x-www-form-urlencoded"]

    static func post(_ client: some TestClientProtocol, _ uri: String, _ body: String, headers: HTTPFields = origin) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Pairs through the page: asks for a code, reads what was spoken, types it.
    static func pair(_ client: some TestClientProtocol, _ fixture: Fixture) async throws -> (cookie: String, token: String) {
        let asked = try await post(client, "/pair/code", "")
        #expect(asked.status == .ok)
        let spoken = try #require(await fixture.sink.spoken.last)
        let code = String(spoken.filter(\.isNumber).prefix(6))
        let paired = try await post(client, "/pair", "code=\(code)")
        #expect(paired.status == .seeOther)
        let setCookie = try #require(paired.headers[.setCookie])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        let token = try #require(RequestRules.sessionToken(cookieHeader: String(setCookie.split(separator: ";")[0])))
        return ("\(RequestRules.cookieName)=\(token)", token)
    }

    /// Pairs, and gives the headers of a form the page itself would send.
    static func pairedForm(_ client: some TestClientProtocol, _ fixture: Fixture) async throws -> (headers: HTTPFields, token: String) {
        let (cookie, token) = try await pair(client, fixture)
        var headers = origin
        headers[.cookie] = cookie
        return (headers, token)
    }

    @Test func anUnpairedBrowserIsSentToPairing() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            for path in ["/", "/shortcuts", "/settings", "/history", "/logs", "/tokens", "/events"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .seeOther, "\(path)")
                #expect(response.headers[.location] == "/pair")
            }
            let forged = try await Self.post(client, "/history/forget", "scope=all&confirm=yes")
            #expect(forged.status == .forbidden)
        }
    }

    @Test func pairingWithTheSpokenCodeOpensThePages() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (cookie, _) = try await Self.pair(client, fixture)
            let status = try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie])
            #expect(status.status == .ok)
            #expect(String(buffer: status.body).contains("<h1>Status</h1>"))
            #expect(status.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(fixture.page.sessions.list().count == 1)
        }
    }

    @Test func changesWithoutTheFormTokenOrFromAnotherOriginAreRefused() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await Self.pairedForm(client, fixture)
            let good = "form_token=\(RequestRules.formToken(forSession: token))&voice.volume=80"
            // Forgery: the cookie alone (another site's form would carry it... were it not SameSite) is not enough.
            #expect(try await Self.post(client, "/settings", "voice.volume=80", headers: headers).status == .forbidden)
            #expect(try await Self.post(client, "/settings", "form_token=\(String(repeating: "0", count: 32))&voice.volume=80", headers: headers).status == .forbidden)
            var foreign = headers
            foreign[.origin] = "http://evil.example"
            #expect(try await Self.post(client, "/settings", good, headers: foreign).status == .forbidden)
            var none = headers
            none[.origin] = nil
            #expect(try await Self.post(client, "/settings", good, headers: none).status == .forbidden)
            let original = try String(contentsOf: fixture.configFile, encoding: .utf8)
            #expect(try fixture.loaded().voice.volume == 100 && fixture.overlayText.isEmpty)
            // The page's own form does it: into the state directory's settings.yaml, which
            // the daemon may write (/etc/parley is not its to write on the device);
            // parley.yaml stays as the owner wrote it, comments and all.
            let saved = try await Self.post(client, "/settings", good, headers: headers)
            #expect(saved.status == .ok)
            #expect(try String(contentsOf: fixture.configFile, encoding: .utf8) == original)
            #expect(fixture.overlayText.contains("  volume: 80"))
            #expect(try fixture.loaded().voice.volume == 80 && fixture.loaded().voice.name == "en-us")
            // A value the daemon would refuse is refused with its key and reason, the settings untouched.
            let bad = try await Self.post(client, "/settings", "form_token=\(RequestRules.formToken(forSession: token))&voice.volume=900", headers: headers)
            #expect(bad.status == .unprocessableContent)
            #expect(String(buffer: bad.body).contains("voice.volume: 900 is not in 0…200"))
            #expect(try fixture.loaded().voice.volume == 80)
        }
    }

    @Test func oversizedBodiesAreRefused() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await Self.pairedForm(client, fixture)
            let text = String(repeating: "x", count: RequestRules.maximumBodyBytes + 1)
            let response = try await Self.post(client, "/shortcuts/save", "form_token=\(RequestRules.formToken(forSession: token))&text=\(text)", headers: headers)
            #expect(response.status == .contentTooLarge)
            #expect(!FileManager.default.fileExists(atPath: fixture.page.uploadFile.path))
            let pairing = try await Self.post(client, "/pair", "code=" + String(repeating: "1", count: RequestRules.maximumBodyBytes))
            #expect(pairing.status == .contentTooLarge)
        }
    }

    @Test func noPathIsTakenFromARequest() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        let secret = fixture.directory.appendingPathComponent("secret.yaml")
        try "name: secret-contents\n".write(to: secret, atomically: true, encoding: .utf8)
        try await fixture.application.test(.router) { client in
            let (cookie, _) = try await Self.pair(client, fixture)
            for name in ["../secret", "../secret.yaml", secret.path, "%2e%2e%2fsecret.yaml"] {
                let response = try await client.execute(
                    uri: "/shortcuts/edit?name=\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)", method: .get,
                    headers: [.cookie: cookie])
                #expect(response.status == .notFound, "\(name)")
                #expect(!String(buffer: response.body).contains("secret-contents"))
            }
            for path in ["/../secret.yaml", "/style.css/../../secret.yaml", "/%2e%2e/secret.yaml"] {
                let response = try await client.execute(uri: path, method: .get, headers: [.cookie: cookie])
                #expect(response.status == .notFound, "\(path)")
            }
        }
    }

    @Test func bruteForcedCodesLockPairing() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            #expect(try await Self.post(client, "/pair/code", "").status == .ok)
            let spoken = try #require(await fixture.sink.spoken.last)
            let code = String(spoken.filter(\.isNumber).prefix(6))
            let wrong = code == "000000" ? "000001" : "000000"
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<PairingGate.attemptsBeforeLockOut { statuses.append(try await Self.post(client, "/pair", "code=\(wrong)").status) }
            #expect(statuses == [.forbidden, .forbidden, .forbidden, .forbidden, .tooManyRequests])
            // This address is locked: the right code is refused too (another address could still type it).
            let late = try await Self.post(client, "/pair", "code=\(code)")
            #expect(late.status == .tooManyRequests)
            #expect(late.headers[.setCookie] == nil)
            #expect(fixture.page.sessions.list().isEmpty)
        }
    }

    @Test func aRevokedBrowserIsLockedOut() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (cookie, token) = try await Self.pair(client, fixture)
            // Revoked through the control socket's request, as `parley web tokens --revoke` sends it.
            let control = WebControlHandler(inner: fixture.page.handler, sessions: fixture.page.sessions)
            let listed = await control.handle(.webTokens).webTokens ?? []
            #expect(listed.map(\.id) == [SessionStore.id(ofToken: token)])
            #expect(await control.handle(.revokeWebToken(listed[0].id)).ok)
            #expect(await !control.handle(.revokeWebToken(listed[0].id)).ok)
            let after = try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .seeOther)
            #expect(after.headers[.location] == "/pair")
        }
    }

    @Test func aShortcutIsCheckedSavedEditedAndDeletedByName() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await Self.pairedForm(client, fixture)
            let form = "form_token=\(RequestRules.formToken(forSession: token))&text="
            let bad = "name: Tea\nphrases: [tea time]\nactions:\n  - speek: Kettle on.\n"
            let refused = try await Self.post(client, "/shortcuts/save", form + bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, headers: headers)
            #expect(refused.status == .unprocessableContent)
            let page = String(buffer: refused.body)
            #expect(page.contains("id=\"line-4\""), "\(page)")
            #expect(!FileManager.default.fileExists(atPath: fixture.page.uploadFile.path))
            let good = bad.replacingOccurrences(of: "speek", with: "speak")
            let saved = try await Self.post(client, "/shortcuts/save", form + good.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, headers: headers)
            #expect(saved.status == .seeOther)
            let edit = try await client.execute(uri: "/shortcuts/edit?name=Tea", method: .get, headers: [.cookie: headers[.cookie]!])
            #expect(String(buffer: edit.body).contains("speak: Kettle on."))
            // "Try it" resolves the phrase to the shortcut without running it.
            let tried = try await client.execute(uri: "/shortcuts?try=hey+tea+time", method: .get, headers: [.cookie: headers[.cookie]!])
            #expect(String(buffer: tried.body).contains("“tea time” → shortcut Tea. Not run."), "\(String(buffer: tried.body))")
            let nothing = try await client.execute(uri: "/shortcuts?try=purple+elephants", method: .get, headers: [.cookie: headers[.cookie]!])
            #expect(String(buffer: nothing.body).contains("→ no phrase matches."))
            let deleted = try await Self.post(client, "/shortcuts/delete", "form_token=\(RequestRules.formToken(forSession: token))&name=Tea", headers: headers)
            #expect(deleted.headers[.location]?.contains("Removed") == true)
            let list = try await client.execute(uri: "/shortcuts", method: .get, headers: [.cookie: headers[.cookie]!])
            #expect(String(buffer: list.body).contains("No shortcuts yet."))
        }
    }

    @Test func aShortcutsProblemsAreShownAtTheirLine() async throws {
        let problems = ShortcutProblems.parse("/s/web/upload.yaml:3:5: unknown action \"sya\"\nsomething else", file: "/s/web/upload.yaml")
        #expect(problems == [.init(line: 3, reason: "unknown action \"sya\""), .init(line: nil, reason: "something else")])
        let html = Pages.edit(text: "a\nb\nc\n", problems: problems, visit: .init(request: Request(head: .init(method: .get, scheme: "http", authority: "x", path: "/"), body: .init(buffer: ByteBuffer())), session: "s"), original: nil)
        #expect(html.contains("<li class=\"bad\" id=\"line-3\"><code>c</code><span class=\"problem\">line 3: unknown action &quot;sya&quot;</span>"))
    }
}
