import Foundation
import ParleyWyoming
import Testing

@testable import ParleyConfiguration
@testable import ParleyDaemon

/// `home_assistant` in parley.yaml: off by default, every key read, bad values named.
@Suite struct HomeAssistantConfigTests {
    private func parse(_ yaml: String) throws -> ParleyConfig {
        try ConfigLoader.parse(yaml, file: "/etc/parley/parley.yaml")
    }

    @Test func offByDefault() throws {
        let settings = try parse("").homeAssistant
        #expect(!settings.satellite && !settings.handler)
        #expect(settings.port == 10_700 && settings.handlerPort == 10_800 && settings.listen == "lan")
        #expect(settings.allow.isEmpty)
    }

    @Test func everyKeyIsRead() throws {
        let settings = try parse("""
            home_assistant:
              satellite: true
              port: 10701
              handler: true
              handler_port: 10801
              listen: 192.168.1.20
              allow: [192.168.1.10, 192.168.1.11]
              name: Kitchen speaker
              area: Kitchen
            """).homeAssistant
        #expect(settings.satellite && settings.handler)
        #expect(settings.port == 10_701 && settings.handlerPort == 10_801)
        #expect(settings.listen == "192.168.1.20" && settings.name == "Kitchen speaker" && settings.area == "Kitchen")
        #expect(settings.allow == ["192.168.1.10", "192.168.1.11"])
        #expect(try parse("home_assistant: {allow: 10.0.0.5, listen: loopback}").homeAssistant.allow == ["10.0.0.5"])
    }

    @Test(arguments: [
        ("home_assistant: {satellite: maybe}", "home_assistant.satellite", 1),
        ("home_assistant:\n  port: 70000", "home_assistant.port", 2),
        ("home_assistant:\n  listen: kitchen.local", "home_assistant.listen", 2),
        ("home_assistant:\n  allow: [192.168.1.10, homeassistant.local]", "home_assistant.allow", 2),
        ("home_assistant:\n  allow: 0.0.0.0", "home_assistant.allow", 2),
        ("home_assistant:\n  satelite: true", "home_assistant.satelite", 2),
        ("home_assistant:\n  satellite: true\n  handler: true\n  handler_port: 10700", "home_assistant", 2),
    ])
    func badValuesAreNamedWithTheirLine(yaml: String, key: String, line: Int) throws {
        let error = #expect(throws: ConfigError.self) { try parse(yaml) }
        #expect(error?.key == key, "\(error.map(String.init(describing:)) ?? "")")
        #expect(error?.line == line, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test func statusSaysWhenAudioLastLeftAndWhy() {
        var status = WyomingSatelliteStatus(peer: nil, running: false, lastAudioSent: nil, lastFault: nil)
        #expect(HomeAssistantServices.statusLine(status) == "satellite, Home Assistant not connected; no audio has left the device")
        status.peer = "192.168.1.10:40000"
        status.running = true
        status.lastAudioSent = WyomingAudioRecord(at: Date(timeIntervalSince1970: 0), bytes: 35_412,
                                                  reason: "a command Parley did not know (no words matched)", requestDelay: nil)
        let line = HomeAssistantServices.statusLine(status)
        #expect(line.hasPrefix("satellite, Home Assistant at 192.168.1.10:40000; audio last left the device "))
        #expect(line.hasSuffix("(35412 bytes): a command Parley did not know (no words matched)"))
    }
}

/// The listening pipeline's seam: which rejected utterances are handed on, from where.
@Suite struct RejectedUtteranceSeamTests {
    static let minimum = ListeningPipeline.minimumRejectedSamples(.milliseconds(600), rate: 16_000)

    @Test func theMinimumIsTheTrailingSilenceAndFourTenthsOfWords() {
        #expect(Self.minimum == 16_000)
    }

    @Test func afterAConfirmedWakeWordOnlyWhatFollowsItIsHandedOn() {
        #expect(ListeningPipeline.rejectedCommandStart(kind: .commands, wakeEnd: 20_000, woke: true, utteranceStart: 4_000,
                                                       end: 60_000, minimumSamples: Self.minimum) == 20_000)
    }

    @Test func theWakeWordAloneOpensTheWindowAsBefore() {
        // 0.8 s after the wake phrase: its trailing silence, no words.
        #expect(ListeningPipeline.rejectedCommandStart(kind: .commands, wakeEnd: 20_000, woke: true, utteranceStart: 4_000,
                                                       end: 32_800, minimumSamples: Self.minimum) == nil)
    }

    @Test func withoutTheWakeWordNothingLeaves() {
        #expect(ListeningPipeline.rejectedCommandStart(kind: .commands, wakeEnd: nil, woke: false, utteranceStart: 0,
                                                       end: 90_000, minimumSamples: Self.minimum) == nil)
        for kind in [ListeningPipeline.Kind.followUp, .dictation, .bargeIn] {
            #expect(ListeningPipeline.rejectedCommandStart(kind: kind, wakeEnd: 10, woke: true, utteranceStart: 0,
                                                           end: 90_000, minimumSamples: Self.minimum) == nil)
        }
    }

    @Test func inTheWindowTheWholeUtteranceIsTheCommand() {
        #expect(ListeningPipeline.rejectedCommandStart(kind: .window, wakeEnd: nil, woke: false, utteranceStart: 8_000,
                                                       end: 50_000, minimumSamples: Self.minimum) == 8_000)
        #expect(ListeningPipeline.rejectedCommandStart(kind: .window, wakeEnd: nil, woke: false, utteranceStart: 8_000,
                                                       end: 20_000, minimumSamples: Self.minimum) == nil)
    }
}

/// The satellite's mDNS announcement without Avahi installed.
@Suite struct AvahiAnnouncementTests {
    @Test func withoutAvahiTheSatelliteGoesOnUnannounced() {
        let announcement = AvahiAnnouncement(name: "Parley", port: 10_700, logger: .init(label: "test"), tool: "/nonexistent/avahi-publish-service")
        #expect(!announcement.isAnnouncing)
        announcement.stop()
    }

    @Test func theHandlersLineSaysWhoIsConnectedTheLastTranscriptAndThatNoAudioLeaves() {
        var status = WyomingHandleLink.Status()
        #expect(HomeAssistantServices.handlerStatusLine(status, port: 10_800, satelliteOn: false)
            == "handler on (port 10800), Home Assistant not connected; no transcript yet; "
            + "no audio has left the device (text in, text out; the satellite is off)")
        status.peers = ["192.168.1.10:40000"]
        status.lastTranscript = .init(at: Date(timeIntervalSince1970: 0), peer: "192.168.1.10:40000", handled: true)
        let line = HomeAssistantServices.handlerStatusLine(status, port: 10_800, satelliteOn: true)
        #expect(line.hasPrefix("handler on (port 10800), connected: 192.168.1.10:40000; last transcript "))
        #expect(line.hasSuffix(" from 192.168.1.10:40000, handled; no audio leaves the device through it (text in, text out)"))
    }
}
