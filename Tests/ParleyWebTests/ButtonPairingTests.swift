import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ParleyCore
import ParleyDaemon
import ParleyHardware
import ParleyTestKit
import Testing

@testable import ParleyWeb

/// `web.pairing: button`: the page's request only arms pairing; the code is
/// said after a press of the device's button, so nobody on the network can
/// make the speaker talk. The press goes through the board's own event loop
/// (BoardBridge with the simulated board), as a real one would.
@Suite struct ButtonPairingTests {
    @Test func theCodeIsSaidOnlyAfterAPressOfTheButton() async throws {
        let fixture = try await WebPageTests.Fixture(pairing: .button)
        defer { fixture.cleanUp() }
        let board = try #require(fixture.components.board as? BoardBridge)
        let simulated = try #require(board.hardware as? SimulatedBoard)
        WebAttachment.wirePairingButton(fixture.page, fixture.components)
        let events = Task { try await board.run() }
        defer { events.cancel() }
        try await fixture.application.test(.router) { client in
            // Nothing asked: a press is the engine's, not the page's.
            #expect(await fixture.page.buttonPressed() == false)
            // Asked (a script may ask as often as it likes): nothing is said.
            for _ in 0..<5 {
                let asked = try await WebPageTests.post(client, "/pair/code", "")
                #expect(asked.status == .ok)
                #expect(String(buffer: asked.body).contains("Press the button on the speaker within a minute"))
            }
            #expect(await fixture.sink.events.isEmpty, "the speaker talked without a press")
            simulated.press(.press)
            try await Poll.until("the code is said after the press") { await !fixture.sink.spoken.isEmpty }
            let code = String(try #require(await fixture.sink.spoken.last).filter(\.isNumber).prefix(6))
            let paired = try await WebPageTests.post(client, "/pair", "code=\(code)")
            #expect(paired.status == .seeOther)
            // Armed once, taken once: the next press is the engine's again.
            #expect(await fixture.page.buttonPressed() == false)
            #expect(await fixture.sink.spoken.count == 1)
        }
    }
}
