import Foundation
import ParleyAudio
import ParleyTestKit
import Testing

@testable import ParleyConfiguration

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
        #expect(config.audio.capture == nil && config.audio.playback == nil)  // the board's (a spool and a file on sim)
        #expect(config.audio.captureFormat == ParleyConfig.CaptureFormat())
        #expect(config.audio.pacing == .realtime && config.audio.realtimePriority == 20)
        #expect(config.resolvedPath("capture.wav") == "/var/lib/parley/capture.wav")
        #expect(config.controlSocket == "/run/parley/parley.sock")
        #expect(!config.voiceConfirmableCategories.contains("order"))
    }

    @Test func theShippedExampleIsValidAndStatesTheDefaults() throws {
        let example = Fixtures.packageRoot.appendingPathComponent("dist/parley.yaml").path
        #expect(try ConfigLoader.load(contentsOf: example) == ParleyConfig())
    }

    @Test func everyKeyIsRead() throws {
        let config = try parse("""
            board: /opt/boards/custom.yaml
            audio:
              capture: plughw:CARD=seeed2micvoicec
              playback: file:/tmp/out.wav
              sample_rate: 16000
              capture_rate: 48000
              capture_channels: 2
              capture_period_frames: 480
              capture_buffer_frames: 3840
              realtime_priority: 10
              pacing: realtime
              endpoint_silence: 0.5
              complete_phrase_silence: 120ms
            wake: {direct: false, named: true, name: Hey Jude, hey_optional: true, sensitivity: 0.7, window: 3s, detector: pocketsphinx}
            primary_app: Coffee Maker
            voice: {name: en-gb+f3, rate: 200, volume: 80}
            speech: {acoustic_model: adapted}
            confirm_by_voice: [delete, set]
            timeouts: {answer: 10s, confirmation: 2min, perform: 1500ms}
            tips: false
            state_directory: /tmp/parley-state
            apps_folder: /srv/parley-apps
            control_socket: /tmp/parley.sock
            control_group: parley
            log_level: debug
            """)
        #expect(config.board == "/opt/boards/custom.yaml")
        #expect(config.audio.capture == .alsa("plughw:CARD=seeed2micvoicec"))
        #expect(config.audio.playback == .file("/tmp/out.wav"))
        #expect(config.audio.endpointSilence == .milliseconds(500))
        #expect(config.audio.completePhraseSilence == .milliseconds(120))
        #expect(config.audio.captureFormat == {
            var f = ParleyConfig.CaptureFormat(); f.rate = 48_000; f.channels = 2; f.periodFrames = 480; f.bufferFrames = 3_840
            return f
        }())
        #expect(config.audio.realtimePriority == 10 && config.audio.pacing == .realtime)
        #expect(config.wake.direct == false && config.wake.name == "hey jude" && config.wake.sensitivity == 0.7)
        #expect(config.wake.window == .seconds(3) && config.wake.heyOptional && config.wake.detector == .pocketsphinx)
        #expect(config.primaryApp == "Coffee Maker")
        #expect(config.voice == { var v = ParleyConfig.Voice(); v.name = "en-gb+f3"; v.rate = 200; v.volume = 80; return v }())
        #expect(config.voiceConfirmableCategories == ["delete", "set"])
        #expect(config.acousticModel == "adapted")
        #expect(config.timeouts.answer == .seconds(10) && config.timeouts.confirmation == .seconds(120))
        #expect(config.timeouts.perform == .milliseconds(1500))
        #expect(config.tips == false && config.controlGroup == "parley" && config.logLevel == "debug")
        #expect(config.databasePath == "/tmp/parley-state/state.db")
        #expect(config.appsFolderPath == "/srv/parley-apps")
    }

    @Test func theAppsFolderIsInsideTheStateDirectoryByDefault() throws {
        let config = try ConfigLoader.parse("state_directory: /tmp/s\n", file: "parley.yaml")
        #expect(config.appsFolderPath == "/tmp/s/apps")
        #expect(try ConfigLoader.parse("state_directory: /tmp/s\napps_folder: mine\n", file: "parley.yaml").appsFolderPath == "/tmp/s/mine")
    }

    /// `auto` uses the package's socket only when it is there; `off` never;
    /// a path always (a handler then cannot start without it).
    @Test func theHandlerSandboxIsUsedWhereItsSocketIs() throws {
        let auto = try parse("board: sim")
        #expect(auto.handlerSandbox == "auto")
        #expect(auto.handlerSandboxSocket(defaultSocket: "/run/parley-app.sock", exists: { _ in true }) == "/run/parley-app.sock")
        #expect(auto.handlerSandboxSocket(defaultSocket: "/run/parley-app.sock", exists: { _ in false }) == nil)
        // A regular file is not the socket.
        #expect(auto.handlerSandboxSocket(defaultSocket: "/etc/hostname") == nil)
        let off = try parse("handler_sandbox: \"off\"")
        #expect(off.handlerSandboxSocket(defaultSocket: "/run/parley-app.sock", exists: { _ in true }) == nil)
        let path = try parse("handler_sandbox: /run/mine.sock")
        #expect(path.handlerSandboxSocket(defaultSocket: "/run/parley-app.sock", exists: { _ in false }) == "/run/mine.sock")
        let error = refusal("board: sim\nhandler_sandbox: yes please\n")
        #expect(error?.key == "handler_sandbox" && error?.line == 2)
        #expect(error?.reason == "\"yes please\" is not auto, off or the absolute path of the sandbox's socket")
    }

    @Test func theTimeZoneIsANameFromTheSystemsZoneinfo() throws {
        #expect(try parse("time_zone: Europe/Paris").timeZone == "Europe/Paris")
        #expect(try parse("time_zone: UTC").timeZone == "UTC")
        #expect(try parse("board: sim").timeZone == nil)
        for bad in ["Mars/Olympus", "Europe", "../../etc/passwd", "/usr/share/zoneinfo/UTC", "Europe/Paris/..", "Europe/Paris; rm"] {
            let error = refusal("board: sim\ntime_zone: \"\(bad)\"\n")
            #expect(error?.key == "time_zone" && error?.line == 2, "\(bad)")
            #expect(error?.reason == "\"\(bad)\" is not a time zone of this system (a name from /usr/share/zoneinfo, such as Europe/Paris, America/New_York or UTC)",
                    "\(bad): \(error?.reason ?? "accepted")")
        }
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
        let detector = refusal("wake:\n  detector: porcupine")
        #expect(detector?.kind == .impossibleValue && detector?.key == "wake.detector" && detector?.line == 2)
        #expect("\(detector.map { "\($0)" } ?? "")".contains("embedding, network, pocketsphinx"))
        #expect(refusal("audio: {capture: 'file:'}")?.key == "audio.capture")
        #expect(refusal("confirm_by_voice: [shopping]")?.kind == .impossibleValue)
    }

    @Test func theAcousticModelIsStockByDefaultAndAFolderMustHoldAModel() throws {
        #expect(ParleyConfig().acousticModel == "stock")
        #expect(try parse("speech: {acoustic_model: /usr/share/pocketsphinx/model/en-us/en-us}").acousticModel
            == "/usr/share/pocketsphinx/model/en-us/en-us")
        let missing = refusal("speech:\n  acoustic_model: /nowhere/model\n")
        #expect(missing?.kind == .impossibleValue && missing?.key == "speech.acoustic_model" && missing?.line == 2)
        #expect(missing?.reason.contains("adapted, stock or a PocketSphinx model folder") == true)
        #expect(refusal("speech: {model: stock}")?.kind == .unknownKey)
    }

    @Test func theWakeWordHasItsOwnAcousticModelStockByDefault() throws {
        #expect(ParleyConfig().wakeAcousticModel == "stock")
        let both = try parse("speech: {acoustic_model: stock, wake_acoustic_model: adapted}")
        #expect(both.acousticModel == "stock" && both.wakeAcousticModel == "adapted")
        #expect(try parse("speech: {wake_acoustic_model: /usr/share/pocketsphinx/model/en-us/en-us}").wakeAcousticModel
            == "/usr/share/pocketsphinx/model/en-us/en-us")
        let bad = refusal("speech:\n  acoustic_model: adapted\n  wake_acoustic_model: /nowhere/wake-model\n")
        #expect(bad?.kind == .impossibleValue && bad?.key == "speech.wake_acoustic_model" && bad?.line == 3)
        // The message names the key and the value, and what was expected.
        #expect(bad?.description.contains("speech.wake_acoustic_model") == true)
        #expect(bad?.description.contains("/nowhere/wake-model") == true)
        #expect(bad?.reason.contains("adapted, stock or a PocketSphinx model folder") == true)
    }

    @Test func theFrontEndIsTheBoardsByDefaultAndCheckedWithFileAndLine() throws {
        // auto: the neural stage on a Pi 4 or 5, none on a Pi 3 and the simulated board.
        #expect(ParleyConfig().frontEndIsAuto && ParleyConfig().effectiveFrontEnd == .none)
        #expect(try parse("board: pi3").effectiveFrontEnd == .none)
        #expect(try parse("board: pi4").effectiveFrontEnd.mode == .neural)
        #expect(try parse("board: pi5\nspeech: {front_end: auto}").effectiveFrontEnd.mode == .neural)
        #expect(try parse("speech: {front_end: none}").effectiveFrontEnd == .none)
        #expect(try parse("speech: {front_end: denoise}").effectiveFrontEnd.mode == .denoise)
        let neural = try parse("board: pi3\nspeech: {front_end: 'neural:-30'}").effectiveFrontEnd
        #expect(neural.mode == .neural && neural.noiseSuppressDecibels == -30)
        #expect(try parse("board: pi4").effectiveFrontEnd.noiseSuppressDecibels == -100)
        let agc = try parse("speech: {front_end: 'denoise+agc:-25'}").frontEnd
        #expect(agc.mode == .denoiseAGC && agc.noiseSuppressDecibels == -25)
        let bad = refusal("speech:\n  acoustic_model: stock\n  front_end: webrtc\n")
        #expect(bad?.kind == .impossibleValue && bad?.key == "speech.front_end" && bad?.line == 3)
        #expect(bad?.description.contains("webrtc") == true)
        #expect(bad?.reason.contains("none, denoise, denoise+agc or neural") == true)
        #expect(bad?.reason.contains("auto") == true)
        #expect(refusal("speech: {front_end: 'neural:-120'}")?.key == "speech.front_end")
    }

    @Test func echoCancellationIsReadAsWordOrBooleanAndCheckedWithFileAndLine() throws {
        #expect(ParleyConfig().echoCancel == EchoSettings(mode: .on), "on by default (README)")
        #expect(try parse("speech: {echo_cancel: on}").echoCancel.mode == .on)
        #expect(try parse("speech: {echo_cancel: off}").echoCancel == .off)
        #expect(try parse("speech: {echo_cancel: true}").echoCancel.mode == .on)
        let linear = try parse("speech: {echo_cancel: 'linear:200'}").echoCancel
        #expect(linear.mode == .linear && linear.tailMilliseconds == 200)
        let bad = refusal("speech:\n  front_end: none\n  echo_cancel: 'on:900'\n")
        #expect(bad?.kind == .impossibleValue && bad?.key == "speech.echo_cancel" && bad?.line == 3)
        #expect(bad?.description.contains("on:900") == true)
        #expect(bad?.reason.contains("off, on or linear") == true)
    }

    @Test func askingWhenUnsureIsOnByDefaultAndReadAsABoolean() throws {
        #expect(ParleyConfig().askUnsure, "on by default (README)")
        #expect(try parse("speech: {ask_unsure: off}").askUnsure == false)
        #expect(try parse("speech: {ask_unsure: on}").askUnsure)
        let bad = refusal("speech:\n  ask_unsure: sometimes\n")
        #expect(bad?.key == "speech.ask_unsure" && bad?.line == 2)
        #expect(bad?.description.contains("sometimes") == true)
    }

    @Test func theCaptureFormatIsCheckedWithFileAndLine() throws {
        let buffer = refusal("""
            audio:
              capture: hw:1,0
              capture_period_frames: 480
              capture_buffer_frames: 800
            """)
        #expect(buffer?.kind == .impossibleValue)
        #expect(buffer?.key == "audio.capture_buffer_frames" && buffer?.line == 4)
        #expect(buffer?.reason.contains("at least 960") == true)
        #expect(buffer?.description.hasPrefix("/etc/parley/parley.yaml:4:") == true)
        // Only the period given: the default buffer (3840) is too small for it.
        #expect(refusal("audio: {capture_period_frames: 2048}")?.key == "audio.capture_period_frames")
        let channels = refusal("audio:\n  capture_channels: 9\n")
        #expect(channels?.key == "audio.capture_channels" && channels?.line == 2 && channels?.reason.contains("1…8") == true)
        #expect(refusal("audio: {capture_rate: 4000}")?.reason.contains("8000…192000") == true)
        #expect(refusal("audio: {capture_rate: fast}")?.kind == .wrongType)
        #expect(refusal("audio: {realtime_priority: 100}")?.key == "audio.realtime_priority")
        // A file's format is the file's own: a capture format there is a mistake.
        let file = refusal("audio:\n  capture: file:in.wav\n  capture_rate: 48000\n")
        #expect(file?.key == "audio.capture_rate" && file?.line == 3 && file?.reason.contains("WAV file's format") == true)
        #expect(refusal("audio: {capture: 'spool:mic.raw', capture_channels: 2}")?.key == "audio.capture_channels")
        #expect(try parse("audio: {capture: 'plughw:CARD=Device', capture_rate: 44100}").audio.captureFormat.rate == 44_100)
    }

    @Test func fastPacingIsForAFileCapture() throws {
        #expect(try parse("audio: {capture: 'file:in.wav', pacing: fast}").audio.pacing == .fast)
        let microphone = refusal("audio:\n  capture: hw:1,0\n  pacing: fast\n")
        #expect(microphone?.key == "audio.pacing" && microphone?.line == 3)
        #expect(microphone?.reason.contains("file:<path>") == true && microphone?.reason.contains("hw:1,0") == true)
        #expect(refusal("audio: {pacing: fast}")?.reason.contains("board's microphone") == true)
        #expect(refusal("audio: {capture: 'file:in.wav', pacing: slow}")?.reason.contains("realtime, fast") == true)
    }

    /// The capture thread's SCHED_FIFO request must be one the unit permits,
    /// or it is refused on every device.
    @Test func theRealtimePriorityIsWhatTheUnitPermits() throws {
        let unit = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("dist/parleyd.service"), encoding: .utf8)
        let limit = unit.split(separator: "\n").first { $0.hasPrefix("LimitRTPRIO=") }.flatMap { Int($0.dropFirst(12)) }
        #expect(limit != nil)
        #expect(ParleyConfig().audio.realtimePriority == limit)
        #expect(CaptureConfiguration(device: PCMDevice(name: "default")).realtimePriority.map(Int.init) == limit)
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
