import ParleyDevice
import Synchronization
import Testing

@testable import ParleyHardware

func ledBoard(pwmHertz: Int = 0) throws -> Board {
    try Board.parse(yaml: """
        name: leds
        kind: simulated
        button: {}
        leds: { blue: {}, amber: {}, green: {}, red: {} }
        led-timing: { blink-ms: 500, pulse-ms: 1000, pwm-hz: \(pwmHertz), flash-ms: 600 }
        states:
          idle: off
          listening: { blue: on }
          thinking: { blue: pulse }
          speaking: { green: on }
          awaiting-confirmation: { amber: blink }
          success: { green: flash }
          error: { red: on }
          muted: { red: on }
        audio: { capture: "null", playback: "null" }
        """, file: "leds.yaml")
}

let blue = 0, amber = 1, green = 2, red = 3

/// A controller on a manual clock, with its writes and displayed states recorded.
struct LEDHarness {
    let clock = ManualClock(now: .milliseconds(10_000))
    let recorder: LEDRecorder
    let controller: LEDController
    let shown = Locked<[DeviceState]>([])

    init(pwmHertz: Int = 0) throws {
        recorder = LEDRecorder(clock: clock)
        let shown = shown
        controller = LEDController(board: try ledBoard(pwmHertz: pwmHertz), clock: clock, output: recorder.output) { state in
            shown.withLock { $0.append(state) }
        }
    }

    /// Milliseconds since the harness started, of each change of `led`.
    func changes(_ led: Int) -> [(Bool, Int64)] {
        recorder.changes(of: led).map { ($0.lit, ($0.at.nanoseconds - 10_000_000_000) / 1_000_000) }
    }

    var displayed: [DeviceState] { shown.withLock { $0 } }
}

func same(_ a: [(Bool, Int64)], _ b: [(Bool, Int64)]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
}

@Suite("LED state machine on a manual clock")
struct LEDControllerTests {
    @Test func startsWithEveryLEDOffAndNoTimer() throws {
        let h = try LEDHarness()
        #expect(h.controller.levels == [false, false, false, false])
        #expect(h.recorder.count == 4)
        #expect(h.clock.pendingCount == 0)
        #expect(h.controller.displayedState == .idle)
    }

    @Test func steadyStateWritesOnceAndArmsNoTimer() throws {
        let h = try LEDHarness()
        h.controller.setState(.listening)
        h.controller.setState(.listening)
        h.clock.advance(byMilliseconds: 5000)
        #expect(same(h.changes(blue), [(false, 0), (true, 0)]))
        #expect(h.clock.pendingCount == 0)
        #expect(h.displayed == [.listening])
    }

    @Test func blinkTogglesEveryHalfPeriod() throws {
        let h = try LEDHarness()
        h.controller.setState(.awaitingConfirmation)
        h.clock.advance(byMilliseconds: 1000)
        #expect(same(h.changes(amber), [(false, 0), (true, 0), (false, 250), (true, 500), (false, 750), (true, 1000)]))
    }

    @Test func pulseWithoutPWMIsAHeartbeat() throws {
        let h = try LEDHarness()
        h.controller.setState(.thinking)
        h.clock.advance(byMilliseconds: 1300)
        #expect(same(h.changes(blue), [(false, 0), (true, 0), (false, 120), (true, 240), (false, 360), (true, 1000), (false, 1120), (true, 1240)]))
    }

    @Test func pulseWithSoftwarePWMAveragesAThirdBrightness() throws {
        // Brightness is a triangle, squared: its mean over a breath is 1/3.
        let h = try LEDHarness(pwmHertz: 100)
        h.controller.setState(.thinking)
        h.clock.advance(byMilliseconds: 1000)
        let changes = h.changes(blue).dropFirst()  // the initial "off"
        var onTime: Int64 = 0
        var litSince: Int64?
        for (lit, at) in changes {
            if lit { litSince = at } else if let since = litSince { onTime += at - since; litSince = nil }
        }
        if let since = litSince { onTime += 1000 - since }
        let duty = Double(onTime) / 1000
        #expect(abs(duty - 1.0 / 3.0) < 0.05, "duty \(duty)")
        // Dim at the start and end of a breath, bright in the middle.
        #expect(AnimatorProbe.isLit(pwm: 100, atMillisecond: 5) == false)
        #expect(AnimatorProbe.isLit(pwm: 100, atMillisecond: 501) == true)
    }

    @Test func successFlashesThenReturnsToThePreviousState() throws {
        let h = try LEDHarness()
        h.controller.setState(.listening)
        h.clock.advance(byMilliseconds: 100)
        h.controller.setState(.success)
        h.clock.advance(byMilliseconds: 1000)
        #expect(same(h.changes(green), [(false, 0), (true, 100), (false, 700)]))
        #expect(same(h.changes(blue), [(false, 0), (true, 0)]))  // blue is not named by success: it stays
        #expect(h.displayed == [.listening, .success, .listening])
        #expect(h.controller.displayedState == .listening)
    }

    @Test func flashRunsToItsEndWhenTheNextStateComesAtOnce() throws {
        let h = try LEDHarness()
        h.controller.setState(.listening)
        h.controller.setState(.success)
        h.controller.setState(.idle)
        #expect(h.controller.displayedState == .success)
        h.clock.advance(byMilliseconds: 1000)
        #expect(same(h.changes(green), [(false, 0), (true, 0), (false, 600)]))
        #expect(same(h.changes(blue), [(false, 0), (true, 0), (false, 0)]))
        #expect(h.displayed == [.listening, .success, .idle])
    }

    @Test func transientOnPatternLastsOneFlash() throws {
        let h = try LEDHarness()
        h.controller.setState(.error)  // red: on, as a transient state
        h.clock.advance(byMilliseconds: 2000)
        #expect(same(h.changes(red), [(false, 0), (true, 0), (false, 600)]))
    }

    @Test func muteSwitchOverridesTheEngineState() throws {
        let h = try LEDHarness()
        h.controller.setState(.listening)
        h.controller.setMuteSwitch(true)
        #expect(h.controller.levels == [false, false, false, true])
        h.controller.setState(.thinking)
        #expect(h.controller.displayedState == .muted)
        #expect(h.controller.levels[red])
        h.controller.setMuteSwitch(false)
        #expect(h.controller.displayedState == .thinking)
        #expect(h.controller.levels[red] == false)
        #expect(h.displayed == [.listening, .muted, .thinking])
    }

    @Test func shutdownTurnsEverythingOffAndStops() throws {
        let h = try LEDHarness()
        h.controller.setState(.awaitingConfirmation)
        h.controller.setState(.success)
        #expect(h.clock.pendingCount == 1)
        h.controller.shutdown()
        #expect(h.controller.levels == [false, false, false, false])
        #expect(h.clock.pendingCount == 0)
        let writes = h.recorder.count
        h.controller.setState(.listening)
        h.clock.advance(byMilliseconds: 5000)
        #expect(h.recorder.count == writes)
        h.controller.shutdown()
    }
}

/// Direct checks of the pure animator.
enum AnimatorProbe {
    static func isLit(pwm: Int, atMillisecond ms: Int64) -> Bool {
        let animator = LEDAnimator(timing: LEDTiming(blinkMilliseconds: 500, pulseMilliseconds: 1000, pwmHertz: pwm, flashMilliseconds: 600))
        return animator.isLit(.pulse, since: .milliseconds(0), at: .milliseconds(ms))
    }
}

@Suite("LED animator")
struct LEDAnimatorTests {
    let animator = LEDAnimator(timing: LEDTiming(blinkMilliseconds: 400, pulseMilliseconds: 1000, pwmHertz: 0, flashMilliseconds: 300))

    @Test func steadyPatternsNeverChange() {
        #expect(animator.nextChange(.on, since: .milliseconds(0), after: .milliseconds(5)) == nil)
        #expect(animator.nextChange(.off, since: .milliseconds(0), after: .milliseconds(5)) == nil)
    }

    @Test func flashEnds() {
        #expect(animator.isLit(.flash, since: .milliseconds(100), at: .milliseconds(399)))
        #expect(!animator.isLit(.flash, since: .milliseconds(100), at: .milliseconds(400)))
        #expect(animator.nextChange(.flash, since: .milliseconds(100), after: .milliseconds(150)) == .milliseconds(400))
        #expect(animator.nextChange(.flash, since: .milliseconds(100), after: .milliseconds(400)) == nil)
    }

    @Test func blinkNextChangeIsTheNextHalfPeriod() {
        #expect(animator.nextChange(.blink, since: .milliseconds(100), after: .milliseconds(100)) == .milliseconds(300))
        #expect(animator.nextChange(.blink, since: .milliseconds(100), after: .milliseconds(299)) == .milliseconds(300))
        #expect(animator.nextChange(.blink, since: .milliseconds(100), after: .milliseconds(300)) == .milliseconds(500))
    }
}
