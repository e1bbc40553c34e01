import ParleyDevice
import Testing

@testable import ParleyHardware

/// Replays a timeline of raw edges (in milliseconds) and then lets time run to `until`.
func recognise(
    _ edges: [(ms: Int64, active: Bool)], until end: Int64,
    timings: GestureTimings = GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 300)
) -> [ButtonEvent] {
    var recogniser = GestureRecognizer(timings: timings)
    var gestures: [ButtonEvent] = []
    for edge in edges {
        gestures += recogniser.edge(active: edge.active, at: .milliseconds(edge.ms))
    }
    gestures += recogniser.advance(to: .milliseconds(end))
    return gestures
}

func kinds(_ gestures: [ButtonEvent]) -> [ButtonGesture] { gestures.map(\.kind) }

@Suite("Gesture recognition from event timestamps")
struct GestureRecognizerTests {
    @Test func shortPressIsReportedWhenTheDoublePressWindowCloses() {
        let gestures = recognise([(1000, true), (1120, false)], until: 5000)
        #expect(gestures == [ButtonEvent(.press, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1420))])
    }

    @Test func shortPressIsNotReportedBeforeTheWindowCloses() {
        #expect(recognise([(1000, true), (1120, false)], until: 1419).isEmpty)
    }

    @Test func withoutDoublePressAShortPressIsReportedOnRelease() {
        let timings = GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 0)
        let gestures = recognise([(1000, true), (1120, false)], until: 1120, timings: timings)
        #expect(gestures == [ButtonEvent(.press, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1120))])
    }

    @Test func longPressFiresWhileStillHeldAndTheReleaseIsIgnored() {
        var recogniser = GestureRecognizer(timings: GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 300))
        #expect(recogniser.edge(active: true, at: .milliseconds(1000)).isEmpty)
        #expect(recogniser.deadline == .milliseconds(1020))  // debounce first
        #expect(recogniser.advance(to: .milliseconds(1799)).isEmpty)
        #expect(recogniser.advance(to: .milliseconds(1800)) == [ButtonEvent(.longPress, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1800))])
        #expect(recogniser.edge(active: false, at: .milliseconds(2500)).isEmpty)
        #expect(recogniser.advance(to: .milliseconds(9000)).isEmpty)
    }

    @Test func releaseJustBeforeTheLongPressTimeIsAShortPress() {
        #expect(kinds(recognise([(1000, true), (1799, false)], until: 5000)) == [.press])
    }

    @Test func doublePress() {
        let gestures = recognise([(1000, true), (1100, false), (1300, true), (1400, false)], until: 5000)
        #expect(gestures == [ButtonEvent(.doublePress, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1400))])
    }

    @Test func secondPressAfterTheWindowIsTwoPresses() {
        let gestures = recognise([(1000, true), (1100, false), (1401, true), (1500, false)], until: 5000)
        #expect(kinds(gestures) == [.press, .press])
        #expect(gestures.map(\.pressedAt) == [.milliseconds(1000), .milliseconds(1401)])
    }

    @Test func longSecondPressCancelsAndDropsTheFirst() {
        #expect(kinds(recognise([(1000, true), (1100, false), (1300, true), (2400, false)], until: 5000)) == [.longPress])
    }

    @Test func bounceOnPressAndReleaseIsOnePress() {
        // A contact that chatters for 6 ms on closing and 8 ms on opening.
        let edges: [(ms: Int64, active: Bool)] = [
            (1000, true), (1001, false), (1002, true), (1004, false), (1006, true),
            (1200, false), (1203, true), (1205, false), (1208, true), (1208, false),
        ]
        let gestures = recognise(edges, until: 5000)
        #expect(gestures == [ButtonEvent(.press, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1500))])
    }

    @Test func bounceEndingInTheOtherLevelIsAcceptedWhenTheWindowCloses() {
        // A glitch: active at 1000, back to inactive at 1005 within the debounce window.
        // The press is accepted at 1000 and the release when the window closes (1020).
        let timings = GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 0)
        let gestures = recognise([(1000, true), (1005, false)], until: 5000, timings: timings)
        #expect(gestures == [ButtonEvent(.press, pressedAt: .milliseconds(1000), recognizedAt: .milliseconds(1020))])
    }

    @Test func bounceDoesNotMakeADoublePress() {
        // Bounce 10 ms after release must not count as a second press.
        let gestures = recognise([(1000, true), (1100, false), (1110, true), (1112, false)], until: 5000)
        #expect(kinds(gestures) == [.press])
    }

    @Test func heldAtStartReportsNothingUntilReleasedAndPressedAgain() {
        var recogniser = GestureRecognizer(
            timings: GestureTimings(debounceMilliseconds: 20, longPressMilliseconds: 800, doublePressWindowMilliseconds: 0),
            initiallyPressed: true)
        #expect(recogniser.advance(to: .milliseconds(5000)).isEmpty)
        #expect(recogniser.edge(active: false, at: .milliseconds(6000)).isEmpty)
        #expect(kinds(recogniser.edge(active: true, at: .milliseconds(7000))).isEmpty)
        #expect(kinds(recogniser.edge(active: false, at: .milliseconds(7100))) == [.press])
    }

    @Test func deadlinesAreHandledInOrderWhenAnEdgeArrivesLate() {
        // Press, release, then the next edge long after: the pending press is
        // reported at its own window time before the new edge is processed.
        var recogniser = GestureRecognizer(timings: GestureTimings())
        _ = recogniser.edge(active: true, at: .milliseconds(0))
        _ = recogniser.edge(active: false, at: .milliseconds(100))
        let gestures = recogniser.edge(active: true, at: .milliseconds(10_000))
        #expect(gestures == [ButtonEvent(.press, pressedAt: .milliseconds(0), recognizedAt: .milliseconds(450))])
    }

    @Test func debouncerAloneFollowsTheSwitch() {
        var debouncer = Debouncer(initial: false, debounceMilliseconds: 30)
        #expect(debouncer.edge(active: true, at: .milliseconds(0))?.active == true)
        #expect(debouncer.edge(active: false, at: .milliseconds(10)) == nil)
        #expect(debouncer.edge(active: true, at: .milliseconds(12)) == nil)
        #expect(debouncer.advance(to: .milliseconds(30)) == nil)  // settled where it was
        #expect(debouncer.edge(active: false, at: .milliseconds(100))?.at == .milliseconds(100))
        #expect(debouncer.stable == false)
    }
}

@Suite("What a gesture means")
struct ButtonMeaningTests {
    let settings = ButtonSettings(input: nil, timings: GestureTimings(), whenIdle: .suggestion, doublePress: .repeatLast)

    @Test func pressConfirmsDuringAConfirmation() {
        #expect(settings.action(for: .press, in: .awaitingConfirmation) == .confirm)
    }

    @Test func longPressCancelsAlways() {
        for context in [ButtonContext.idle, .awaitingConfirmation, .busy] {
            #expect(settings.action(for: .longPress, in: context) == .cancel)
        }
    }

    @Test func idlePressFollowsTheBoardFile() {
        #expect(settings.action(for: .press, in: .idle) == .suggestion)
        var pushToTalk = settings
        pushToTalk.whenIdle = .pushToTalk
        #expect(pushToTalk.action(for: .press, in: .idle) == .pushToTalk)
    }

    @Test func doublePressRunsTheConfiguredAction() {
        #expect(settings.action(for: .doublePress, in: .idle) == .doublePress(.repeatLast))
        var none = settings
        none.doublePress = .none
        #expect(none.action(for: .doublePress, in: .idle) == ButtonAction.none)
    }
}
