import ParleyDevice
import Glibc
import Logging
import Testing

@testable import ParleyHardware

let gpioBoardYAML = """
    name: bench
    kind: gpio
    chip: pinctrl-bcm2711
    button: { line: 17, active: low, bias: pull-up, debounce-ms: 20, long-press-ms: 800, double-press-ms: 300 }
    mute-switch: { line: 27, active: low, bias: pull-up, debounce-ms: 30 }
    leds:
      blue: { line: 22 }
      red: { line: 23, active: low }
    states:
      idle: off
      listening: { blue: on }
      thinking: { blue: blink }
      speaking: { blue: on }
      awaiting-confirmation: { blue: blink }
      success: { blue: flash }
      error: { red: flash }
      muted: { red: on }
    audio: { capture: "null", playback: "null" }
    """

/// Collects log lines so tests can check what a person would read.
final class LogCapture: LogHandler, @unchecked Sendable {
    let lines = Locked<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level): \(event.message)") }
    }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

struct GPIOHarness {
    let mock = GPIODMock()
    let clock = ManualClock()
    let log = LogCapture()

    func open(_ yaml: String = gpioBoardYAML) throws -> GPIOBoard {
        let board = try Board.parse(yaml: yaml, file: "bench.yaml")
        let log = log
        return GPIOBoard(board: board, logger: Logger(label: "test") { _ in log }, clock: clock, functions: mock.functions)
    }
}

func monotonicNow() -> Timestamp { GPIODFunctions.system.monotonicNow() }

/// The first `count` events of the stream.
func firstEvents(_ board: any HardwareBoard, _ count: Int) async -> [HardwareEvent] {
    var events: [HardwareEvent] = []
    for await event in board.events {
        events.append(event)
        if events.count == count { break }
    }
    return events
}

@Suite("libgpiod wrapper and GPIO board, without hardware", .timeLimit(.minutes(3)))
struct GPIOBoardTests {
    @Test func callTraceOfStartAndShutdown() throws {
        let h = GPIOHarness()
        let board = try h.open()
        #expect(board.isButtonAvailable)
        #expect(board.unavailableReason == nil)
        let start = h.mock.gpiodTrace.filter { !$0.hasPrefix(GPIODMock.Call.eventFD) }
        #if LibgpiodV2
        #expect(start == [
            "gpiod_chip_open(/dev/gpiochip0)", "gpiod_chip_get_info()",
            "gpiod_chip_request_lines(22, parley, output 0, 0)",
            "gpiod_chip_request_lines(23, parley, output 0, ACTIVE_LOW)",
            "gpiod_chip_request_lines(17, parley, input both-edges, ACTIVE_LOW|BIAS_PULL_UP)",
            "gpiod_line_request_get_value(17)",
            "gpiod_chip_request_lines(27, parley, input both-edges, ACTIVE_LOW|BIAS_PULL_UP)",
            "gpiod_line_request_get_value(27)",
            "gpiod_line_request_set_value(22, 0)", "gpiod_line_request_set_value(23, 0)",
        ])
        let release = "gpiod_line_request_release"
        #else
        #expect(start == [
            "gpiod_chip_open_lookup(pinctrl-bcm2711)",
            "gpiod_chip_get_line(22)", "gpiod_line_request_output_flags(22, parley, 0, 0)",
            "gpiod_chip_get_line(23)", "gpiod_line_request_output_flags(23, parley, ACTIVE_LOW, 0)",
            "gpiod_chip_get_line(17)", "gpiod_line_request_both_edges_events_flags(17, parley, ACTIVE_LOW|BIAS_PULL_UP)",
            "gpiod_line_get_value(17)",
            "gpiod_chip_get_line(27)", "gpiod_line_request_both_edges_events_flags(27, parley, ACTIVE_LOW|BIAS_PULL_UP)",
            "gpiod_line_get_value(27)",
            "gpiod_line_set_value(22, 0)", "gpiod_line_set_value(23, 0)",
        ])
        let release = "gpiod_line_release"
        #endif
        let setValue = GPIODMock.Call.setValue
        board.setState(.listening)
        #expect(h.mock.lineValue(22) == 1)
        #expect(h.mock.gpiodTrace.filter { $0.hasPrefix(GPIODMock.Call.eventFD) }.count <= 2)
        let before = h.mock.gpiodTrace.count
        board.shutdown()
        // The watcher thread asked for both event descriptors before it stopped.
        #expect(Set(h.mock.gpiodTrace.filter { $0.hasPrefix(GPIODMock.Call.eventFD) }) == ["\(GPIODMock.Call.eventFD)(17)", "\(GPIODMock.Call.eventFD)(27)"])
        let end = h.mock.gpiodTrace.dropFirst(before).filter { !$0.hasPrefix(GPIODMock.Call.eventFD) }
        // The inputs go first (the watcher stops), then every LED is written off before its line is released.
        #expect(end == [
            "\(release)(17)", "\(release)(27)",
            "\(setValue)(22, 0)", "\(setValue)(23, 0)",
            "\(release)(22)", "\(release)(23)",
            "gpiod_chip_close()",
        ])
        #expect(Set(end.filter { $0.hasPrefix(release) }) == [
            "\(release)(22)", "\(release)(23)", "\(release)(17)", "\(release)(27)",
        ])
        #expect(end.last == "gpiod_chip_close()")
        #expect(h.mock.openChips == 0)
        #expect(h.mock.requestedLines.isEmpty)
        #expect(h.mock.trace.contains { $0.hasPrefix("poll(") })
        board.shutdown()  // twice is harmless
        #expect(h.mock.openChips == 0)
    }

    @Test func missingChipStartsWithoutTheButtonAndSaysWhy() throws {
        let h = GPIOHarness()
        h.mock.removeAllChips()
        let board = try h.open()
        #expect(!board.isButtonAvailable)
        #expect(board.unavailableReason?.contains("ENOENT") == true)
        #expect(h.log.text.contains("error: board 'bench' (bench.yaml, chip): \(GPIODMock.Call.chipOpen) failed for chip 'pinctrl-bcm2711'"))
        #expect(h.log.text.contains("confirmations that need the button will be refused aloud"))
        board.setState(.listening)
        #expect(board.displayedState == .listening)
        #expect(!h.mock.trace.contains { $0.hasPrefix("gpiod_line") })
        board.shutdown()
    }

    @Test func busyButtonLineLeavesTheLEDsWorking() throws {
        let h = GPIOHarness()
        h.mock.fail(GPIODMock.Call.requestInput, errno: EBUSY, after: GPIODMock.Call.requestsBeforeButton)
        let board = try h.open()
        #expect(!board.isButtonAvailable)
        #expect(board.unavailableReason?.contains("EBUSY") == true)
        #expect(board.unavailableReason?.contains("gpiochip0 line 17") == true)
        #expect(h.log.text.contains("in use by another program"))
        board.setState(.listening)
        #expect(h.mock.lineValue(22) == 1)
        board.shutdown()
        #expect(h.mock.openChips == 0)
    }

    @Test func permissionDeniedIsPreferredToNotFound() throws {
        let h = GPIOHarness()
        h.mock.fail(GPIODMock.Call.chipOpen, errno: EACCES)
        let board = try h.open(gpioBoardYAML.replacingOccurrences(of: "chip: pinctrl-bcm2711", with: "chip: [pinctrl-bcm2711, gpiochip9]"))
        #expect(!board.isButtonAvailable)
        let reason = try #require(board.unavailableReason)
        #expect(reason.contains("EACCES"))
        #expect(reason.contains("group gpio"))
        #if LibgpiodV2
        // The label is looked for on every chip; gpiochip9 is a device name.
        #expect(h.mock.gpiodTrace == ["gpiod_chip_open(/dev/gpiochip0)", "gpiod_chip_open(/dev/gpiochip9)"])
        #else
        #expect(h.mock.gpiodTrace == ["gpiod_chip_open_lookup(pinctrl-bcm2711)", "gpiod_chip_open_lookup(gpiochip9)"])
        #endif
        board.shutdown()
    }

    #if LibgpiodV2
    /// v2 has no lookup by label: every chip is opened and asked for its
    /// label, and the ones that do not match are closed again.
    @Test func v2FindsTheChipByLabelAmongSeveral() throws {
        let h = GPIOHarness()
        h.mock.setChipPaths(["/dev/gpiochip0": "rp1-other", "/dev/gpiochip1": "pinctrl-bcm2711"])
        let board = try h.open()
        #expect(board.isButtonAvailable)
        #expect(Array(h.mock.gpiodTrace.prefix(5)) == [
            "gpiod_chip_open(/dev/gpiochip0)", "gpiod_chip_get_info()", "gpiod_chip_close()",
            "gpiod_chip_open(/dev/gpiochip1)", "gpiod_chip_get_info()",
        ])
        #expect(h.mock.openChips == 1)
        board.shutdown()
        #expect(h.mock.openChips == 0)
        #expect(h.mock.requestedLines.isEmpty)
    }

    /// A device name or path is opened directly, as v1's lookup did.
    @Test func v2OpensNamesAndPathsDirectly() throws {
        let h = GPIOHarness()
        let board = try h.open(gpioBoardYAML.replacingOccurrences(of: "chip: pinctrl-bcm2711", with: "chip: [gpiochip7, /dev/gpiochip0]"))
        #expect(board.isButtonAvailable)
        #expect(Array(h.mock.gpiodTrace.prefix(3)) == [
            "gpiod_chip_open(/dev/gpiochip7)", "gpiod_chip_open(/dev/gpiochip0)", "gpiod_chip_get_info()",
        ])
        board.shutdown()
    }
    #endif

    @Test func eintrIsRetried() throws {
        let h = GPIOHarness()
        h.mock.fail(GPIODMock.Call.chipOpen, errno: EINTR, times: 2)
        h.mock.fail(GPIODMock.Call.getValue, errno: EINTR)
        let board = try h.open()
        #expect(board.isButtonAvailable)
        #expect(h.mock.gpiodTrace.filter { $0.hasPrefix(GPIODMock.Call.chipOpen + "(") }.count == 3)
        #expect(h.mock.gpiodTrace.filter { $0 == "\(GPIODMock.Call.getValue)(17)" }.count == 2)
        board.shutdown()
    }

    @Test func lineOffsetTheChipLacksIsReported() throws {
        let h = GPIOHarness()
        let board = try h.open(gpioBoardYAML.replacingOccurrences(of: "red: { line: 23", with: "red: { line: 99"))
        // The log names the board file and the key to correct.
        #expect(h.log.text.contains("error: board 'bench' (bench.yaml, leds.red.line): LED 'red' unavailable: \(GPIODMock.Call.lineLookup) failed for gpiochip0 line 99 (the chip has 58 lines)"))
        #expect(h.log.text.contains("EINVAL"))
        #expect(board.isButtonAvailable)
        board.shutdown()
    }

    @Test func buttonAndMuteSwitchLinesTheChipLacksNameTheirKeys() throws {
        let h = GPIOHarness()
        let yaml = gpioBoardYAML.replacingOccurrences(of: "button: { line: 17", with: "button: { line: 98")
            .replacingOccurrences(of: "mute-switch: { line: 27", with: "mute-switch: { line: 97")
        let board = try h.open(yaml)
        #expect(!board.isButtonAvailable)
        #expect(board.unavailableReason?.contains("bench.yaml, button.line") == true)
        #expect(h.log.text.contains("error: board 'bench' (bench.yaml, button.line): button unavailable: \(GPIODMock.Call.lineLookup) failed for gpiochip0 line 98"))
        #expect(h.log.text.contains("error: board 'bench' (bench.yaml, mute-switch.line): mute switch unavailable: \(GPIODMock.Call.lineLookup) failed for gpiochip0 line 97"))
        board.shutdown()
    }

    @Test func edgesBecomeGesturesWithKernelTimestamps() async throws {
        let h = GPIOHarness()
        h.mock.fail("poll", errno: EINTR, times: 3)
        h.mock.fail(GPIODMock.Call.readEvent, errno: EINTR, times: 2)
        let board = try h.open()
        let t0 = monotonicNow().adding(milliseconds: -3000)
        // A bouncy short press, then a double press, then a long press.
        h.mock.sendEdges(17, [
            (true, t0), (false, t0.adding(milliseconds: 2)), (true, t0.adding(milliseconds: 4)),
            (false, t0.adding(milliseconds: 120)),
            (true, t0.adding(milliseconds: 1000)), (false, t0.adding(milliseconds: 1100)),
            (true, t0.adding(milliseconds: 1250)), (false, t0.adding(milliseconds: 1350)),
            (true, t0.adding(milliseconds: 2000)), (false, t0.adding(milliseconds: 2900)),
        ])
        let events = await firstEvents(board, 3)
        #expect(events == [
            .button(ButtonEvent(.press, pressedAt: t0, recognizedAt: t0.adding(milliseconds: 420))),
            .button(ButtonEvent(.doublePress, pressedAt: t0.adding(milliseconds: 1000), recognizedAt: t0.adding(milliseconds: 1350))),
            .button(ButtonEvent(.longPress, pressedAt: t0.adding(milliseconds: 2000), recognizedAt: t0.adding(milliseconds: 2800))),
        ])
        #expect(board.droppedEvents == 0)
        board.shutdown()
        // Ten edges, two reads interrupted and retried.
        #expect(h.mock.trace.filter { $0.hasPrefix(GPIODMock.Call.readEvent) }.count == 12)
    }

    @Test func muteSwitchStopsListeningAndShowsMuted() async throws {
        let h = GPIOHarness()
        h.mock.setValue(27, 1)  // engaged at start
        let board = try h.open()
        #expect(board.isMuted)
        #expect(board.displayedState == .muted)
        #expect(h.mock.lineValue(23) == 1)  // red on
        let t0 = monotonicNow().adding(milliseconds: -2000)
        h.mock.sendEdges(27, [(false, t0), (true, t0.adding(milliseconds: 5)), (false, t0.adding(milliseconds: 8))])
        #expect(await firstEvents(board, 1) == [.mute(false)])
        #expect(!board.isMuted)
        #expect(board.displayedState == .idle)
        h.mock.sendEdges(27, [(true, t0.adding(milliseconds: 1000))])
        #expect(await firstEvents(board, 1) == [.mute(true)])
        #expect(board.isMuted)
        #expect(board.displayedState == .muted)
        board.shutdown()
    }

    @Test func shutdownFinishesTheStreams() async throws {
        let h = GPIOHarness()
        let board = try h.open()
        board.shutdown()
        var count = 0
        for await _ in board.events { count += 1 }
        #expect(count == 0)
    }
}

// The limit catches a hang, not slowness: 200 presses each wait for the
// consumer's task, which a machine busy with the parallel suite (and CI's
// other jobs) resumes late; a starved run took over a minute.
@Suite("Event path in real time", .timeLimit(.minutes(5)))
struct GPIOEventPathTests {
    /// Every press written in real time is recognised once, in order, with its
    /// kernel timestamps; the time from the deciding edge's timestamp to the
    /// consumer receiving the gesture is printed (scripts/bench-gpio.sh).
    @Test func everyRealTimePressIsRecognisedInOrder() async throws {
        let h = GPIOHarness()
        let board = try h.open(gpioBoardYAML.replacingOccurrences(
            of: "debounce-ms: 20, long-press-ms: 800, double-press-ms: 300",
            with: "debounce-ms: 0, long-press-ms: 800, double-press-ms: 0"))
        var iterator = board.events.makeAsyncIterator()
        var latencies: [Int64] = []
        let presses = 200
        for _ in 0..<presses {
            let pressed = monotonicNow()
            let released = pressed.adding(nanoseconds: 1000)
            h.mock.sendEdges(17, [(true, pressed), (false, released)])
            let event = await iterator.next()
            let received = monotonicNow()
            #expect(event == .button(ButtonEvent(.press, pressedAt: pressed, recognizedAt: released)))
            latencies.append(received.nanoseconds(since: released))
        }
        board.shutdown()
        #expect(latencies.count == presses)
        #expect(board.droppedEvents == 0)
        latencies.sort()
        let median = Double(latencies[presses / 2]) / 1000
        let p90 = Double(latencies[presses * 9 / 10]) / 1000
        print("gpio-bench: event-to-gesture latency median \(median) µs, p90 \(p90) µs over \(presses) presses")
    }
}

@Suite("Watcher edge cases", .timeLimit(.minutes(3)))
struct GPIOWatcherEdgeCaseTests {
    @Test func timestampsNotOnTheMonotonicClockAreReplacedByTheReadTime() async throws {
        // Kernels before 5.7 stamped line events with CLOCK_REALTIME.
        let h = GPIOHarness()
        let board = try h.open(gpioBoardYAML.replacingOccurrences(of: "double-press-ms: 300", with: "double-press-ms: 0"))
        let realtime = Timestamp(nanoseconds: 1_790_000_000_000_000_000)
        let before = monotonicNow()
        h.mock.sendEdges(17, [(true, realtime), (false, realtime.adding(milliseconds: 100))])
        let events = await firstEvents(board, 1)
        let after = monotonicNow()
        guard case .button(let gesture) = events.first else { Issue.record("\(events)"); return }
        #expect(gesture.kind == .press)
        #expect(gesture.pressedAt >= before && gesture.recognizedAt <= after.adding(milliseconds: 20))
        board.shutdown()
    }

    @Test func aFailingLEDIsLoggedOnce() throws {
        let h = GPIOHarness()
        let board = try h.open()
        h.mock.fail(GPIODMock.Call.setValue, errno: EIO, times: 3)
        board.setState(.listening)
        board.setState(.idle)
        board.setState(.listening)
        #expect(h.log.text.components(separatedBy: "LED write failed").count == 2)
        board.shutdown()
    }
}
