import Foundation
@testable import ParleyControl
import ParleyCore
import Testing

/// The control protocol's lines are an interface (docs/control-protocol.md):
/// every request and response kind is written byte for byte as below (keys
/// sorted, absent fields left out, slashes unescaped, dates ISO 8601) and
/// read back to the same value, and the examples in the document itself are
/// what the code writes.
@Suite struct ControlWireTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)  // 2023-11-14T22:13:20Z

    static let requests: [(ControlRequest, String)] = [
        (.status, #"{"command":"status"}"#),
        (.say("order tomato soup with soup chef"), #"{"command":"say","text":"order tomato soup with soup chef"}"#),
        (.play("/tmp/order.wav"), #"{"command":"play","value":"/tmp/order.wav"}"#),
        (.press(.short), #"{"command":"press"}"#),
        (.press(.long), #"{"command":"long-press"}"#),
        (.press(.double), #"{"command":"double-press"}"#),
        (.apps, #"{"command":"apps"}"#),
        (.shortcuts, #"{"command":"shortcuts"}"#),
        (.logs(limit: 20), #"{"command":"logs","limit":20}"#),
        (.donations(app: "Soup Chef", limit: 5), #"{"app":"Soup Chef","command":"donations","limit":5}"#),
        (.donations(app: nil, limit: nil), #"{"command":"donations"}"#),
        (.forgetDonations(.row(7)), #"{"command":"forget","scope":"row","value":"7"}"#),
        (.forgetDonations(.identifier("order-1")), #"{"command":"forget","scope":"identifier","value":"order-1"}"#),
        (.forgetDonations(.group("soups")), #"{"command":"forget","scope":"group","value":"soups"}"#),
        (.forgetDonations(.app("Soup Chef")), #"{"command":"forget","scope":"app","value":"Soup Chef"}"#),
        (.forgetDonations(.all), #"{"command":"forget","scope":"all"}"#),
        (.phrases, #"{"command":"phrases"}"#),
        (.addPhrase(phrase: "coffee time", app: "Coffee Maker", intent: "OrderDrink", parameters: ["size": "large"]),
         #"{"app":"Coffee Maker","command":"add-phrase","intent":"OrderDrink","parameters":{"size":"large"},"phrase":"coffee time"}"#),
        (.deletePhrase("coffee time"), #"{"command":"delete-phrase","phrase":"coffee time"}"#),
        (.personalShortcuts, #"{"command":"shortcut-list"}"#),
        (.showShortcut("Coffee break"), #"{"command":"shortcut-show","value":"Coffee break"}"#),
        (.runShortcut("Coffee break"), #"{"command":"shortcut-run","value":"Coffee break"}"#),
        (.addShortcut("/home/pi/coffee.yaml"), #"{"command":"shortcut-add","value":"/home/pi/coffee.yaml"}"#),
        (.removeShortcut("Coffee break"), #"{"command":"shortcut-remove","value":"Coffee break"}"#),
        (.setShortcutEnabled(name: "Coffee break", enabled: false), #"{"command":"shortcut-disable","value":"Coffee break"}"#),
        (.setShortcutEnabled(name: "Coffee break", enabled: true), #"{"command":"shortcut-enable","value":"Coffee break"}"#),
        (.adapt, #"{"command":"adapt"}"#),
        (.webTokens, #"{"command":"web-tokens"}"#),
        (.revokeWebToken("3f2a9c"), #"{"command":"web-revoke","value":"3f2a9c"}"#),
        (.resolve("coffee time"), #"{"command":"resolve","text":"coffee time"}"#),
        (.volume(.up), #"{"command":"volume","value":"up"}"#),
        (.volume(.set(7)), #"{"command":"volume","value":"7"}"#),
        (.volume(nil), #"{"command":"volume"}"#),
        (.externalApps, #"{"command":"app-status"}"#),
        (.setAppEnabled(identifier: "KitchenLights", enabled: false), #"{"command":"app-off","value":"KitchenLights"}"#),
        (.setAppEnabled(identifier: "KitchenLights", enabled: true), #"{"command":"app-on","value":"KitchenLights"}"#),
        (.installApp(name: "home-assistant"), #"{"command":"app-install","value":"home-assistant"}"#),
        (.installApp(name: nil), #"{"command":"app-install"}"#),
        (.keptRecordings, #"{"command":"kept-list"}"#),
        (.deleteKeptRecording("00000012"), #"{"command":"kept-delete","value":"00000012"}"#),
        (.forgetKeptRecordings, #"{"command":"kept-forget"}"#),
        (.update("/data/parley-qemu.raucb"), #"{"command":"update","value":"/data/parley-qemu.raucb"}"#),
    ]

    static var responses: [(ControlResponse, String)] {
        var spoken = ControlResponse(); spoken.spoken = ["How many soups do you want?"]
        var status = ControlResponse()
        status.status = DaemonStatus(
            version: "0.9.0", pid: 412, uptimeSeconds: 12.5, state: "idle", board: "simulated", stateDirectory: "/var/lib/parley",
            audio: AudioStatus(capture: "hw:1,0", playback: "default", state: "running", overruns: 0),
            recognitions: 3, lastIntents: ["Soup Chef/OrderSoup"], grammarSize: 120, donations: 4, customPhrases: 1, notWired: [])
        var fullStatus = ControlResponse()
        fullStatus.status = DaemonStatus(
            version: "0.9.0", pid: 412, uptimeSeconds: 12.5, state: "listening", board: "respeaker-2mic", led: "muted",
            buttonProblem: "line busy", configFile: "/etc/parley/parley.yaml", stateDirectory: "/var/lib/parley",
            audio: AudioStatus(capture: "hw:1,0", playback: "default", state: "recovering", overruns: 2,
                               problem: "audio device 'hw:1,0' not found", speaking: false),
            recognitions: 3, lastIntents: [], grammarSize: 120, donations: 4, customPhrases: 1, notWired: ["gpio"],
            keptRecordings: 5, keepAudio: true, roomTransform: date, homeAssistant: "connected",
            homeAssistantHandler: "on", timeZone: "Europe/Paris", frontEnd: "speex")
        var slots = ControlResponse()
        slots.status = status.status
        slots.status?.slots = [SlotSummary(name: "rootfs.0", bootname: "A", state: "booted", bootStatus: "good"),
                               SlotSummary(name: "rootfs.1", bootname: "B", state: "inactive", bootStatus: "good", version: "0.1.1",
                                           compatible: "parley-qemu-amd64", installed: "2026-12-05T10:12:41Z")]
        var apps = ControlResponse()
        apps.apps = [AppSummary(name: "Soup Chef", synonyms: ["soup"], intents: ["OrderSoup"], primary: true),
                     AppSummary(name: "Kitchen Lights", synonyms: [], intents: ["On"], primary: false,
                                identifier: "KitchenLights", external: true)]
        var shortcuts = ControlResponse()
        shortcuts.shortcuts = [ShortcutSummary(phrase: "order soup", app: "Soup Chef", intent: "OrderSoup")]
        var logs = ControlResponse(); logs.logs = ["line 1"]
        var donations = ControlResponse()
        donations.donations = [Donation(rowID: 7, identifier: "order-1", app: "Soup Chef", intent: "OrderSoup",
                                        parameters: ["soup": "tomato"], date: date, trigger: "voice")]
        var phrases = ControlResponse()
        phrases.phrases = [CustomPhrase(phrase: "coffee time", app: "Coffee Maker", intent: "OrderDrink", parameters: [:], created: date)]
        var personal = ControlResponse()
        personal.personalShortcuts = [PersonalShortcut(name: "Coffee break", phrases: ["coffee break"], triggers: ["double-press"],
                                                       summary: "Order a latte.", file: "/etc/parley/shortcuts/coffee.yaml",
                                                       enabled: false)]
        var count = ControlResponse.message("Forgot 2 donations."); count.count = 2
        var tokens = ControlResponse()
        tokens.webTokens = [WebTokenSummary(id: "3f2a9c", created: date, lastUsed: date, browser: "Firefox")]
        var resolution = ControlResponse()
        resolution.resolution = PhraseResolution(phrase: "coffee time", matched: true, target: "Coffee Maker.OrderDrink",
                                                 values: ["size": "large"])
        var volume = ControlResponse.message("Volume 7 of 10 (software (samples scaled)).")
        volume.volume = VolumeReport(level: 7, muted: false, output: "software (samples scaled)")
        var external = ControlResponse()
        external.externalApps = [ExternalAppStatus(identifier: "KitchenLights", name: "Kitchen Lights", folder: "kitchen-lights",
                                                   state: "running (pid 123)", restarts: 0, enabled: true, stderr: ["ready"])]
        var kept = ControlResponse()
        kept.keptRecordings = [KeptRecordingSummary(id: "00000012", words: "order soup", seconds: 1.5, date: date)]
        var shipped = ControlResponse.message("2 apps come with Parley.")
        shipped.shippedApps = [ShippedAppSummary(folder: "kitchen-lights", name: "Kitchen Lights", installed: true),
                               ShippedAppSummary(folder: "home-assistant", name: "Home Assistant", installed: false,
                                                 problem: "python3 is missing")]
        return [
            (.failure("unknown command \"make-coffee\""), #"{"error":"unknown command \"make-coffee\"","ok":false}"#),
            (.message("Short press sent."), #"{"message":"Short press sent.","ok":true}"#),
            (spoken, #"{"ok":true,"spoken":["How many soups do you want?"]}"#),
            (status, #"{"ok":true,"status":{"audio":{"capture":"hw:1,0","overruns":0,"playback":"default","state":"running"},"#
                + #""board":"simulated","customPhrases":1,"donations":4,"grammarSize":120,"lastIntents":["Soup Chef/OrderSoup"],"#
                + #""notWired":[],"pid":412,"recognitions":3,"state":"idle","stateDirectory":"/var/lib/parley","uptimeSeconds":12.5,"#
                + #""version":"0.9.0"}}"#),
            (fullStatus, #"{"ok":true,"status":{"audio":{"capture":"hw:1,0","overruns":2,"playback":"default","#
                + #""problem":"audio device 'hw:1,0' not found","speaking":false,"state":"recovering"},"board":"respeaker-2mic","#
                + #""buttonProblem":"line busy","configFile":"/etc/parley/parley.yaml","customPhrases":1,"donations":4,"#
                + #""frontEnd":"speex","grammarSize":120,"homeAssistant":"connected","homeAssistantHandler":"on","keepAudio":true,"#
                + #""keptRecordings":5,"lastIntents":[],"led":"muted","notWired":["gpio"],"pid":412,"recognitions":3,"#
                + #""roomTransform":"2023-11-14T22:13:20Z","state":"listening","stateDirectory":"/var/lib/parley","#
                + #""timeZone":"Europe/Paris","uptimeSeconds":12.5,"version":"0.9.0"}}"#),
            (slots, #"{"ok":true,"status":{"audio":{"capture":"hw:1,0","overruns":0,"playback":"default","state":"running"},"#
                + #""board":"simulated","customPhrases":1,"donations":4,"grammarSize":120,"lastIntents":["Soup Chef/OrderSoup"],"#
                + #""notWired":[],"pid":412,"recognitions":3,"#
                + #""slots":[{"bootStatus":"good","bootname":"A","name":"rootfs.0","state":"booted"},{"bootStatus":"good","#
                + #""bootname":"B","compatible":"parley-qemu-amd64","installed":"2026-12-05T10:12:41Z","name":"rootfs.1","#
                + #""state":"inactive","version":"0.1.1"}],"#
                + #""state":"idle","stateDirectory":"/var/lib/parley","uptimeSeconds":12.5,"version":"0.9.0"}}"#),
            (apps, #"{"apps":[{"intents":["OrderSoup"],"name":"Soup Chef","primary":true,"synonyms":["soup"]},"#
                + #"{"external":true,"identifier":"KitchenLights","intents":["On"],"name":"Kitchen Lights","primary":false,"#
                + #""synonyms":[]}],"ok":true}"#),
            (shortcuts, #"{"ok":true,"shortcuts":[{"app":"Soup Chef","intent":"OrderSoup","phrase":"order soup"}]}"#),
            (logs, #"{"logs":["line 1"],"ok":true}"#),
            (donations, #"{"donations":[{"app":"Soup Chef","date":"2023-11-14T22:13:20Z","identifier":"order-1","#
                + #""intent":"OrderSoup","parameters":{"soup":"tomato"},"rowID":7,"trigger":"voice"}],"ok":true}"#),
            (phrases, #"{"ok":true,"phrases":[{"app":"Coffee Maker","created":"2023-11-14T22:13:20Z","intent":"OrderDrink","#
                + #""parameters":{},"phrase":"coffee time"}]}"#),
            (personal, #"{"ok":true,"personalShortcuts":[{"enabled":false,"file":"/etc/parley/shortcuts/coffee.yaml","#
                + #""name":"Coffee break","phrases":["coffee break"],"summary":"Order a latte.","triggers":["double-press"]}]}"#),
            (count, #"{"count":2,"message":"Forgot 2 donations.","ok":true}"#),
            (tokens, #"{"ok":true,"webTokens":[{"browser":"Firefox","created":"2023-11-14T22:13:20Z","id":"3f2a9c","#
                + #""lastUsed":"2023-11-14T22:13:20Z"}]}"#),
            (resolution, #"{"ok":true,"resolution":{"matched":true,"phrase":"coffee time","target":"Coffee Maker.OrderDrink","#
                + #""values":{"size":"large"}}}"#),
            (volume, #"{"message":"Volume 7 of 10 (software (samples scaled)).","ok":true,"#
                + #""volume":{"level":7,"muted":false,"output":"software (samples scaled)"}}"#),
            (external, #"{"externalApps":[{"enabled":true,"folder":"kitchen-lights","identifier":"KitchenLights","#
                + #""name":"Kitchen Lights","restarts":0,"state":"running (pid 123)","stderr":["ready"]}],"ok":true}"#),
            (kept, #"{"keptRecordings":[{"date":"2023-11-14T22:13:20Z","id":"00000012","seconds":1.5,"words":"order soup"}],"#
                + #""ok":true}"#),
            (shipped, #"{"message":"2 apps come with Parley.","ok":true,"shippedApps":[{"folder":"kitchen-lights","#
                + #""installed":true,"name":"Kitchen Lights"},{"folder":"home-assistant","installed":false,"#
                + #""name":"Home Assistant","problem":"python3 is missing"}]}"#),
        ]
    }

    static func line(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func everyRequestKindIsWrittenAsTheDocumentedLineAndReadBack() throws {
        for (request, expected) in Self.requests {
            #expect(Self.line(try ControlCoding.encode(request)) == expected + "\n")
            #expect(try ControlRequest(line: Data(expected.utf8)) == request, "\(expected)")
        }
    }

    @Test func everyResponseKindIsWrittenAsTheDocumentedLineAndReadBack() throws {
        for (response, expected) in Self.responses {
            #expect(Self.line(try ControlCoding.encode(response)) == expected + "\n")
            #expect(try ControlCoding.decode(ControlResponse.self, from: Data(expected.utf8)) == response, "\(expected)")
        }
    }

    /// Every command of docs/control-protocol.md's request table has a kind
    /// above, and every kind above is in the table.
    @Test func theDocumentedCommandsAreTheOnesWritten() throws {
        let table = try Self.document().split(separator: "\n").filter { $0.hasPrefix("| `") }.flatMap { row in
            // The first cell: "`press`, `long-press`, `double-press`".
            row.split(separator: "|")[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["`"]) }
        }
        let written = Set(Self.requests.map { $0.0.wire.command })
        #expect(Set(table).subtracting(["command"]) == written)  // less the header row
    }

    /// The document's examples: each request line reads and is written back
    /// unchanged, each answer line likewise, and the refused command's
    /// answer is what the daemon writes for it.
    @Test func theDocumentsExamplesAreWhatTheCodeWrites() throws {
        let document = try Self.document()
        let lines = document.split(separator: "\n")
        let requests = lines.filter { $0.hasPrefix("→ ") }.map { String($0.dropFirst(2)) }
        let answers = lines.filter { $0.hasPrefix("← ") }.map { String($0.dropFirst(2)) }
        #expect(requests.count == 4 && answers.count == 4)
        for line in requests.dropLast() {
            #expect(Self.line(try ControlCoding.encode(try ControlRequest(line: Data(line.utf8)))) == line + "\n")
        }
        for line in answers {
            let response = try ControlCoding.decode(ControlResponse.self, from: Data(line.utf8))
            #expect(Self.line(try ControlCoding.encode(response)) == line + "\n")
        }
        let refused = #expect(throws: ControlProtocolError.self) { try ControlRequest(line: Data(requests[3].utf8)) }
        #expect(Self.line(try ControlCoding.encode(ControlResponse.failure(refused?.description ?? ""))) == answers[3] + "\n")
    }

    @Test func refusalsKeepTheirDocumentedTexts() {
        let cases: [(String, String)] = [
            ("not json", #"not a JSON request object with a "command" field"#),
            (#"{"command":5}"#, #"not a JSON request object with a "command" field"#),
            (#"{"command":"fly"}"#, #"unknown command "fly""#),
            (#"{"command":"say"}"#, #"say needs "text""#),
            (#"{"command":"shortcut-run","value":""}"#, #"shortcut-run needs "value""#),
            (#"{"command":"add-phrase","phrase":"p","app":"a"}"#, #"add-phrase needs "intent""#),
            (#"{"command":"forget"}"#, #"forget needs "scope": row, identifier, group, app or all"#),
            (#"{"command":"forget","scope":"row","value":"abc"}"#, "forget row needs a numeric value"),
            (#"{"command":"volume","value":"loud"}"#, #"volume "value" must be \#(VolumeChange.spellings), not "loud""#),
        ]
        for (line, expected) in cases {
            let error = #expect(throws: ControlProtocolError.self) { try ControlRequest(line: Data(line.utf8)) }
            #expect(error?.description == expected, "\(line)")
        }
    }

    static func document() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/control-protocol.md"), encoding: .utf8)
    }
}
