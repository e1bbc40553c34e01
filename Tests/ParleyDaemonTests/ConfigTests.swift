import Foundation
import ParleyTestKit
import Testing

@testable import ParleyDaemon

@Suite struct ConfigTests {
    private func parse(_ yaml: String) throws -> ParleyConfig {
        try ConfigLoader.parse(yaml, file: "/etc/parley/parley.yaml")
    }

    private func refusal(_ yaml: String) -> ConfigError? {
        #expect(throws: ConfigError.self) { try parse(yaml) }
    }

    @Test func emptyFileGivesTheDevelopmentDefaults() throws {
        let config = try parse("")
        #expect(config == ParleyConfig())
        #expect(config.board == "sim")
        #expect(config.audio.capture == .spool("microphone.raw"))
        #expect(config.resolvedPath("capture.wav") == "/var/lib/parley/capture.wav")
        #expect(config.controlSocket == "/run/parley/parley.sock")
        #expect(!config.voiceConfirmableCategories.contains("order"))
    }

    @Test func theShippedExampleIsValidAndStatesTheDefaults() throws {
        let example = SharedData.packageRoot.appendingPathComponent("dist/parley.yaml").path
        #expect(try ConfigLoader.load(contentsOf: example) == ParleyConfig())
    }

    @Test func everyKeyIsRead() throws {
        let config = try parse("""
            board: /opt/boards/custom.yaml
            audio:
              capture: plughw:CARD=seeed2micvoicec
              playback: file:/tmp/out.wav
              sample_rate: 16000
              endpoint_silence: 0.5
            wake: {direct: false, named: true, name: Hey Jude, hey_optional: true, sensitivity: 0.7, window: 3s}
            primary_app: Coffee Maker
            voice: {name: en-gb+f3, rate: 200, volume: 80}
            confirm_by_voice: [delete, set]
            timeouts: {answer: 10s, confirmation: 2min, perform: 1500ms}
            tips: false
            state_directory: /tmp/parley-state
            control_socket: /tmp/parley.sock
            control_group: parley
            log_level: debug
            """)
        #expect(config.board == "/opt/boards/custom.yaml")
        #expect(config.audio.capture == .alsa("plughw:CARD=seeed2micvoicec"))
        #expect(config.audio.playback == .file("/tmp/out.wav"))
        #expect(config.audio.endpointSilence == .milliseconds(500))
        #expect(config.wake.direct == false && config.wake.name == "hey jude" && config.wake.sensitivity == 0.7)
        #expect(config.wake.window == .seconds(3) && config.wake.heyOptional)
        #expect(config.primaryApp == "Coffee Maker")
        #expect(config.voice == { var v = ParleyConfig.Voice(); v.name = "en-gb+f3"; v.rate = 200; v.volume = 80; return v }())
        #expect(config.voiceConfirmableCategories == ["delete", "set"])
        #expect(config.timeouts.answer == .seconds(10) && config.timeouts.confirmation == .seconds(120))
        #expect(config.timeouts.perform == .milliseconds(1500))
        #expect(config.tips == false && config.controlGroup == "parley" && config.logLevel == "debug")
        #expect(config.databasePath == "/tmp/parley-state/state.db")
    }

    @Test func unknownKeyIsRefusedWithLineAndKey() {
        let error = refusal("""
            board: sim
            voice:
              name: en-us
              speed: 200
            """)
        #expect(error?.kind == .unknownKey)
        #expect(error?.key == "voice.speed")
        #expect(error?.line == 4)
        #expect(error?.description.hasPrefix("/etc/parley/parley.yaml:4:") == true)
    }

    @Test func wrongTypeIsRefusedWithWhatWasExpected() {
        let error = refusal("""
            tips: true
            wake:
              direct: sometimes
            """)
        #expect(error?.kind == .wrongType)
        #expect(error?.key == "wake.direct")
        #expect(error?.line == 3)
        #expect(error?.reason.contains("true or false") == true)
        #expect(error?.reason.contains("sometimes") == true)

        let section = refusal("audio: file:in.wav")
        #expect(section?.kind == .wrongType && section?.key == "audio" && section?.line == 1)
    }

    @Test func impossibleValueIsRefusedWithTheRange() {
        let error = refusal("""
            voice:
              rate: 1000
            """)
        #expect(error?.kind == .impossibleValue)
        #expect(error?.key == "voice.rate")
        #expect(error?.line == 2)
        #expect(error?.reason.contains("80…450") == true)
    }

    @Test func ordersCanNeverBeConfirmedByVoice() {
        let error = refusal("confirm_by_voice: [set, order]")
        #expect(error?.kind == .impossibleValue)
        #expect(error?.key == "confirm_by_voice[1]")
        #expect(error?.reason.contains("button") == true)
    }

    @Test func otherImpossibleValues() {
        #expect(refusal("timeouts: {answer: 0s}")?.key == "timeouts.answer")
        #expect(refusal("timeouts: {answer: soon}")?.kind == .wrongType)
        #expect(refusal("state_directory: var/lib")?.kind == .impossibleValue)
        #expect(refusal("log_level: chatty")?.kind == .impossibleValue)
        #expect(refusal("wake: {direct: false, named: false}")?.kind == .impossibleValue)
        #expect(refusal("audio: {capture: 'file:'}")?.key == "audio.capture")
        #expect(refusal("confirm_by_voice: [shopping]")?.kind == .impossibleValue)
    }

    @Test func invalidYAMLIsRefusedWithItsPosition() {
        let error = refusal("""
            board: sim
            voice: [en-us
            tips: true
            """)
        #expect(error?.kind == .syntax)
        #expect(error?.line != nil)
        #expect(error?.file == "/etc/parley/parley.yaml")
    }

    @Test func missingExplicitFileIsRefusedButMissingDefaultIsNot() throws {
        let missing = "/nonexistent/parley.yaml"
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(flag: missing, environment: [:]) }
        #expect(error?.kind == .unreadable && error?.file == missing)
        #expect(ConfigLoader.location(flag: nil, environment: ["PARLEY_CONFIG": "/x.yaml"]) == ("/x.yaml", true))
        #expect(ConfigLoader.location(flag: "/a.yaml", environment: ["PARLEY_CONFIG": "/x.yaml"]) == ("/a.yaml", true))
        #expect(ConfigLoader.location(flag: nil, environment: [:]) == (ConfigLoader.defaultPath, false))
    }
}
