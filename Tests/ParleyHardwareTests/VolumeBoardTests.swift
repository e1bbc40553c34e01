import Foundation
import ParleyDevice
import Testing

@testable import ParleyHardware

/// The board file's volume keys and the LEDs' level bar (issue 28).
@Suite struct VolumeBoardTests {
    let gpioHead = """
        name: vol
        kind: gpio
        chip: gpiochip0
        button: { line: 17, active: low, bias: pull-up }
        leds: { blue: { line: 22 } }
        states: { idle: off, listening: off, thinking: off, speaking: off, awaiting-confirmation: off, success: off, error: off, muted: off }

        """

    @Test func mixerControlAndCardAreRead() throws {
        let board = try Board.parse(yaml: gpioHead + """
            audio: { capture: "plughw:CARD=Device,DEV=0", playback: "plughw:CARD=Device,DEV=0", mixer-control: Speaker, mixer-card: "hw:1" }
            """, file: "vol.yaml")
        #expect(board.audio.mixerControl == "Speaker")
        #expect(board.audio.resolvedMixerCard == "hw:1")
        #expect(board.volumeButtons == nil)
    }

    @Test func theMixerCardDefaultsToThePlaybackDevicesCard() {
        #expect(Audio(capture: "x", playback: "plughw:CARD=Device,DEV=0").resolvedMixerCard == "hw:CARD=Device")
        #expect(Audio(capture: "x", playback: "hw:1,0").resolvedMixerCard == "hw:1")
        #expect(Audio(capture: "x", playback: "default").resolvedMixerCard == "default")
        #expect(Audio(capture: "x", playback: "null").mixerControl == nil)
    }

    @Test func volumeButtonsAreLinesClaimedLikeTheOthers() throws {
        let board = try Board.parse(yaml: gpioHead + """
            volume-buttons:
              up: { line: 5, active: low, bias: pull-up }
              down: { line: 6, active: low, bias: pull-up, debounce-ms: 40 }
            audio: { capture: "null", playback: "null" }
            """, file: "vol.yaml")
        #expect(board.volumeButtons?.up == InputLine(line: 5, active: .low, bias: .pullUp, debounceMilliseconds: 20))
        #expect(board.volumeButtons?.down?.debounceMilliseconds == 40)
    }

    @Test func aVolumeButtonOnTheConfirmButtonsLineIsRefusedNamingBoth() throws {
        let error = #expect(throws: BoardFileError.self) {
            try Board.parse(yaml: gpioHead + """
                volume-buttons:
                  up: { line: 17, active: low, bias: pull-up }
                audio: { capture: "null", playback: "null" }
                """, file: "vol.yaml")
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("vol.yaml") && text.contains("17") && text.contains("button.line"), "\(text)")
    }

    @Test func volumeButtonsNeedAtLeastOneLine() throws {
        let error = #expect(throws: BoardFileError.self) {
            try Board.parse(yaml: gpioHead + """
                volume-buttons: {}
                audio: { capture: "null", playback: "null" }
                """, file: "vol.yaml")
        }
        #expect((error.map { "\($0)" } ?? "").contains("volume-buttons"))
    }

    @Test func anUnknownAudioKeyIsRefusedWithTheKnownOnes() throws {
        let error = #expect(throws: BoardFileError.self) {
            try Board.parse(yaml: gpioHead + """
                audio: { capture: "null", playback: "null", mixer-contrl: PCM }
                """, file: "vol.yaml")
        }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("mixer-contrl") && text.contains("mixer-control"), "\(text)")
    }

    @Test func aSimulatedBoardsVolumeButtonsNeedNoLines() throws {
        let board = try Board.parse(yaml: """
            name: sim
            kind: simulated
            button: {}
            leds: { blue: {} }
            states: { idle: off, listening: off, thinking: off, speaking: off, awaiting-confirmation: off, success: off, error: off, muted: off }
            volume-buttons: { up: {}, down: {} }
            audio: { capture: "null", playback: "null" }
            """, file: "sim.yaml")
        #expect(board.volumeButtons == VolumeButtons(up: nil, down: nil))
    }

    @Test func theConfirmButtonNeverMeansAVolumeGesture() throws {
        let settings = try ledBoard().button
        #expect(settings.action(for: .volumeUp, in: .idle) == ButtonAction.none)
        #expect(settings.action(for: .volumeDown, in: .awaitingConfirmation) == ButtonAction.none)
    }

    // MARK: The level bar

    @Test func aLevelShowsAsABarForTwoFlashesThenTheStateAgain() throws {
        let h = try LEDHarness()
        h.controller.setState(.listening)
        h.controller.showLevel(5, of: 10)
        #expect(h.controller.levels == [true, true, false, false])
        h.controller.showLevel(10, of: 10)
        #expect(h.controller.levels == [true, true, true, true])
        h.controller.showLevel(1, of: 10)
        #expect(h.controller.levels == [true, false, false, false])   // a level above 0 lights one at least
        h.controller.showLevel(0, of: 10)
        #expect(h.controller.levels == [false, false, false, false])
        h.clock.advance(byMilliseconds: 1_199)
        #expect(h.controller.levels == [false, false, false, false])
        h.clock.advance(byMilliseconds: 1)
        #expect(h.controller.levels == [true, false, false, false])   // listening: blue on again
        #expect(h.displayed == [.listening])                           // the state never changed
    }
}
