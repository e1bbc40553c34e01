import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import Testing

@testable import ParleyWeb

/// The page's switches and deletions (issue 29): a shortcut and an app
/// turned off and on, kept recordings deleted, the time zone set, the
/// microphone's level on the status stream. Each change passes the page's
/// rules (origin, session, form token) and names what it changes by what
/// the daemon lists, never by a path.
@Suite struct WebControlsTests {
    typealias Fixture = WebPageTests.Fixture

    static func form(_ token: String, _ fields: String) -> String {
        "form_token=\(RequestRules.formToken(forSession: token))&" + fields
    }

    /// A request without the page's token, from another origin, or from an unpaired browser changes nothing.
    static func expectRefused(_ client: some TestClientProtocol, _ uri: String, _ fields: String, headers: HTTPFields, token: String) async throws {
        #expect(try await WebPageTests.post(client, uri, fields, headers: headers).status == .forbidden, "\(uri) without the token")
        var foreign = headers
        foreign[.origin] = "http://evil.example"
        #expect(try await WebPageTests.post(client, uri, form(token, fields), headers: foreign).status == .forbidden, "\(uri) from another origin")
        var unpaired = headers
        unpaired[.cookie] = nil
        #expect(try await WebPageTests.post(client, uri, form(token, fields), headers: unpaired).status == .forbidden, "\(uri) unpaired")
    }

    @Test func aShortcutTurnedOffIsListedOffAndNotUnderstoodThenOnAgain() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let cookie: HTTPFields = [.cookie: headers[.cookie]!]
            let tea = "name: Tea\nphrases: [tea time]\nactions:\n  - speak: Kettle on.\n"
            _ = try await WebPageTests.post(client, "/shortcuts/save", Self.form(token, "text=" + tea.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!),
                                            headers: headers)
            try await Self.expectRefused(client, "/shortcuts/switch", "name=Tea&on=no", headers: headers, token: token)
            #expect(try await client.execute(uri: "/shortcuts?try=tea%20time", method: .get, headers: cookie).body.contains("→ shortcut Tea"))

            let off = try await WebPageTests.post(client, "/shortcuts/switch", Self.form(token, "name=Tea&on=no"), headers: headers)
            #expect(off.status == .seeOther)
            let list = String(buffer: try await client.execute(uri: "/shortcuts?try=tea%20time", method: .get, headers: cookie).body)
            #expect(list.contains("<li class=\"card off\" id=\"shortcut-tea\">") && list.contains("id=\"enable-tea\""), "\(list)")
            #expect(list.contains("“tea time” → no phrase matches."))
            let stored = try await fixture.store.value(app: SwitchedOff.owner, key: "shortcuts-off")
            #expect(stored.map { String(decoding: $0, as: UTF8.self) } == "[\"tea\"]")

            // A name the daemon does not list is refused with its name; nothing changes.
            let unknown = try await WebPageTests.post(client, "/shortcuts/switch", Self.form(token, "name=..%2Ftea.yaml&on=no"), headers: headers)
            #expect(unknown.headers[.location]?.removingPercentEncoding?.contains("no shortcut named \"../tea.yaml\"") == true)

            _ = try await WebPageTests.post(client, "/shortcuts/switch", Self.form(token, "name=Tea&on=yes"), headers: headers)
            let back = String(buffer: try await client.execute(uri: "/shortcuts?try=tea%20time", method: .get, headers: cookie).body)
            #expect(back.contains("id=\"disable-tea\"") && back.contains("“tea time” → shortcut Tea. Not run."))
        }
    }

    /// The apps that come with Parley, installed from the page (no SSH):
    /// only a name the daemon lists, only with the page's token.
    @Test func anAppThatComesWithParleyIsInstalledFromThePage() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let cookie: HTTPFields = [.cookie: headers[.cookie]!]
            let page = String(buffer: try await client.execute(uri: "/apps", method: .get, headers: cookie).body)
            for folder in ["home-assistant", "kitchen-lights", "shopping-list"] {
                #expect(page.contains("id=\"app-install-\(folder)\""), "\(folder)")
            }
            try await Self.expectRefused(client, "/apps/install", "name=kitchen-lights", headers: headers, token: token)

            let installed = try await WebPageTests.post(client, "/apps/install", Self.form(token, "name=kitchen-lights"), headers: headers)
            let installedPage = String(buffer: installed.body)
            #expect(installed.status == .ok)
            #expect(installedPage.contains("Installed Kitchen Lights in "), "\(installedPage)")
            #expect(installedPage.contains("id=\"shipped-installed-kitchen-lights\"") && !installedPage.contains("id=\"app-install-kitchen-lights\""))
            #expect(installedPage.contains("id=\"app-state-kitchenlights\">running (pid "), "\(installedPage)")
            let tried = String(buffer: try await client.execute(uri: "/shortcuts?try=turn+off+the+lights", method: .get, headers: cookie).body)
            #expect(!tried.contains("→ no phrase matches."), "\(tried)")

            for name in ["kitchen-lights", "../kitchen-lights", "/etc"] {
                let refused = try await WebPageTests.post(client, "/apps/install",
                                                          Self.form(token, "name=\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"),
                                                          headers: headers)
                #expect(refused.status == .unprocessableContent, "\(name)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.appendingPathComponent("apps").path) == ["kitchen-lights"])
            await fixture.components.apps?.host.stopAll()
        }
    }

    @Test func anAppIsShownWithItsHandlerAndTurnedOffAndOnByItsIdentifier() async throws {
        let fixture = try await Fixture(apps: ["kitchen-lights"])
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let cookie: HTTPFields = [.cookie: headers[.cookie]!]
            let page = String(buffer: try await client.execute(uri: "/apps", method: .get, headers: cookie).body)
            #expect(page.contains("id=\"app-state-kitchenlights\">running (pid "), "\(page)")
            #expect(page.contains("id=\"app-off-kitchenlights\""))
            try await Self.expectRefused(client, "/apps/switch", "id=KitchenLights&on=no", headers: headers, token: token)

            let off = try await WebPageTests.post(client, "/apps/switch", Self.form(token, "id=KitchenLights&on=no"), headers: headers)
            let offPage = String(buffer: off.body)
            #expect(off.status == .ok)
            #expect(offPage.contains("Turned off KitchenLights") && offPage.contains("id=\"app-state-kitchenlights\">off<"), "\(offPage)")
            #expect(offPage.contains("id=\"app-on-kitchenlights\""))
            let tried = String(buffer: try await client.execute(uri: "/shortcuts?try=turn+off+the+lights", method: .get, headers: cookie).body)
            #expect(tried.contains("→ no phrase matches."))

            // Only an identifier the daemon lists: a folder name or a path is refused.
            for id in ["kitchen-lights", "../apps/kitchen-lights", "/etc"] {
                let refused = try await WebPageTests.post(client, "/apps/switch", Self.form(token, "id=\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&on=yes"),
                                                          headers: headers)
                #expect(refused.status == .unprocessableContent, "\(id)")
            }
            let on = try await WebPageTests.post(client, "/apps/switch", Self.form(token, "id=KitchenLights&on=yes"), headers: headers)
            #expect(String(buffer: on.body).contains("id=\"app-state-kitchenlights\">running (pid "))
            #expect(String(buffer: try await client.execute(uri: "/shortcuts?try=turn+off+the+lights", method: .get, headers: cookie).body)
                .contains("→ KitchenLights.AllOff"))
        }
        await fixture.components.apps?.host.stopAll()
    }

    @Test func keptRecordingsAreListedAndDeletedOneByOneOrAllWithTheTransform() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        let room = try #require(fixture.components.room)
        for words in ["order tomato soup", "coffee time", "set a timer for five minutes"] {
            try room.kept.keep([Int16](repeating: 100, count: 16_000), sampleRate: 16_000, words: words)
        }
        let outside = fixture.directory.appendingPathComponent("00000009.wav")
        try Data("not kept audio".utf8).write(to: outside)
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let cookie: HTTPFields = [.cookie: headers[.cookie]!]
            let page = String(buffer: try await client.execute(uri: "/history", method: .get, headers: cookie).body)
            #expect(page.contains("<li id=\"kept-00000002\">“coffee time” <span class=\"hint\">1.0 s"), "\(page)")
            try await Self.expectRefused(client, "/history/kept/delete", "id=00000002", headers: headers, token: token)

            let one = String(buffer: try await WebPageTests.post(client, "/history/kept/delete", Self.form(token, "id=00000002"), headers: headers).body)
            #expect(one.contains("Deleted the recording 00000002.") && !one.contains("kept-00000002"))
            #expect(try room.kept.recordings().map(\.words) == ["order tomato soup", "set a timer for five minutes"])
            // Ids are looked up among the kept ones: a path deletes nothing.
            for id in ["../00000009", outside.path, "00000002"] {
                let refused = String(buffer: try await WebPageTests.post(client, "/history/kept/delete",
                                                                         Self.form(token, "id=\(id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"),
                                                                         headers: headers).body)
                #expect(refused.contains("no kept recording"), "\(id)")
            }
            #expect(FileManager.default.fileExists(atPath: outside.path))

            let unticked = String(buffer: try await WebPageTests.post(client, "/history/kept/delete", Self.form(token, "scope=all"), headers: headers).body)
            #expect(unticked.contains("Tick the box") && room.kept.count == 2)
            let all = String(buffer: try await WebPageTests.post(client, "/history/kept/delete", Self.form(token, "scope=all&confirm=yes"), headers: headers).body)
            #expect(all.contains("Deleted 2 kept recordings and the room transform.") && all.contains("No recordings kept."), "\(all)")
            #expect(room.kept.count == 0 && room.transformDate == nil)
        }
    }

    @Test func theTimeZoneIsCheckedWrittenAndPutInUse() async throws {
        let fixture = try await Fixture()
        defer { fixture.cleanUp() }
        try await fixture.application.test(.router) { client in
            let (headers, token) = try await WebPageTests.pairedForm(client, fixture)
            let cookie: HTTPFields = [.cookie: headers[.cookie]!]
            let settings = String(buffer: try await client.execute(uri: "/settings", method: .get, headers: cookie).body)
            #expect(settings.contains("<option value=\"Europe/Paris\">"))
            #expect(settings.contains("id=\"restart-board\">Needs a restart of parleyd"))
            #expect(!settings.contains("id=\"restart-wake-name\""), "the wake word is put in use at once")
            #expect(!settings.contains("id=\"restart-time-zone\""))

            for bad in ["Mars/Olympus", "../../etc/passwd", "Europe", "Europe/Paris/../Berlin"] {
                let refused = try await WebPageTests.post(client, "/settings", Self.form(token, "time_zone=\(bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"),
                                                          headers: headers)
                #expect(refused.status == .unprocessableContent, "\(bad)")
                #expect(String(buffer: refused.body).contains("time_zone: &quot;\(bad)&quot; is not a time zone of this system"), "\(bad)")
            }
            #expect(!fixture.overlayText.contains("time_zone"))

            let saved = String(buffer: try await WebPageTests.post(client, "/settings", Self.form(token, "time_zone=Pacific%2FAuckland&voice.rate=200"),
                                                                   headers: headers).body)
            #expect(saved.contains("In use now: time_zone, voice.rate."), "\(saved)")
            #expect(fixture.overlayText.contains("time_zone: \"Pacific/Auckland\""))
            #expect(try fixture.loaded().timeZone == "Pacific/Auckland")
            #expect(fixture.components.localTime?.timeZone.identifier == "Pacific/Auckland")
            let status = String(buffer: try await client.execute(uri: "/", method: .get, headers: cookie).body)
            #expect(status.contains("<td id=\"time-zone\">Pacific/Auckland</td>"))

            // Emptied, the zone is the system's again (even were parley.yaml to name one).
            let emptied = String(buffer: try await WebPageTests.post(client, "/settings", Self.form(token, "time_zone="), headers: headers).body)
            #expect(emptied.contains("In use now: time_zone."), "\(emptied)")
            #expect(fixture.overlayText.contains("time_zone: \"\""))
            #expect(try fixture.loaded().timeZone == nil)
            try (String(contentsOf: fixture.configFile, encoding: .utf8) + "time_zone: Europe/Paris\n").write(to: fixture.configFile, atomically: true, encoding: .utf8)
            #expect(try fixture.loaded().timeZone == nil)
            #expect(fixture.components.localTime?.timeZone == TimeZone.current)

            // The wake word and sensitivity: in use at once (`parley say` strips the new words).
            let bridge = try #require(fixture.components.conversation as? EngineBridge)
            #expect(bridge.wake.strip(text: "hey jarvis what time is it") == "jarvis what time is it")
            let wake = String(buffer: try await WebPageTests.post(client, "/settings", Self.form(token, "wake.sensitivity=0.7&wake.name=jarvis"),
                                                                  headers: headers).body)
            #expect(wake.contains("In use now: wake.name, wake.sensitivity."), "\(wake)")
            #expect(!wake.contains("next start"), "\(wake)")
            #expect(bridge.wake.strip(text: "hey jarvis what time is it") == "what time is it")
        }
    }

    @Test func theStatusStreamCarriesTheMicrophonesLevel() async throws {
        let fixture = try await Fixture(microphoneLevel: { 3_277 }, levelInterval: .milliseconds(1))
        defer { fixture.cleanUp() }
        #expect(WebPage.decibels(32_767) == 0 && WebPage.decibels(3_277) == -20 && WebPage.decibels(0) == -90)
        try await fixture.application.test(.router) { client in
            let (cookie, _) = try await WebPageTests.pair(client, fixture)
            let status = String(buffer: try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie]).body)
            #expect(status.contains("<meter id=\"mic-meter\" min=\"-60\" max=\"0\" low=\"-40\" high=\"-6\" value=\"-20\">"))
            let stream = String(buffer: try await client.execute(uri: "/events", method: .get, headers: [.cookie: cookie]).body)
            let events = stream.split(separator: "\n\n")
            // Every event has the level; one in four has the rest of the state too.
            #expect(events.count == 2_400)
            #expect(events.allSatisfy { $0.contains("\"level\":\"-20\"") })
            #expect(events.filter { $0.contains("\"state\"") }.count == 600)
        }
    }
}

extension ByteBuffer {
    func contains(_ text: String) -> Bool { String(buffer: self).contains(text) }
}
