import CGPIOD

/// The consumer name every line is requested with; `gpioinfo` shows it.
let gpioConsumer = "parley"

/// Owns one `struct gpiod_chip *` (from `gpiod_chip_open_lookup`) and closes it
/// with `gpiod_chip_close` in deinit, which also releases any line still requested.
///
/// `@unchecked Sendable`: the handle is immutable and libgpiod v1 keeps each
/// requested line on its own file descriptor; every line is used from one
/// place only (input lines by the watcher thread, outputs under the LED lock).
final class GPIOChip: @unchecked Sendable {
    let handle: OpaquePointer
    let functions: GPIODFunctions
    /// `gpiod_chip_name`, e.g. `gpiochip0`.
    let name: String
    /// `gpiod_chip_label`, e.g. `pinctrl-bcm2711`.
    let label: String

    private init(handle: OpaquePointer, functions: GPIODFunctions) {
        self.handle = handle
        self.functions = functions
        self.name = functions.chipName(handle)
        self.label = functions.chipLabel(handle)
    }

    /// Opens the first of `candidates` that exists. When none opens, the error
    /// is the most telling one: a permission problem beats "not found".
    static func open(candidates: [String], functions: GPIODFunctions) -> Result<GPIOChip, GPIOError> {
        var failure: GPIOError?
        for candidate in candidates {
            switch functions.check("gpiod_chip_open_lookup", "chip '\(candidate)'", { functions.chipOpenLookup(candidate) }) {
            case .success(let handle):
                return .success(GPIOChip(handle: handle, functions: functions))
            case .failure(let error):
                if failure == nil || failure?.kind == .notFound { failure = error }
            }
        }
        return .failure(failure ?? GPIOError(operation: "gpiod_chip_open_lookup", subject: "no chip named", errno: ENOENT))
    }

    func subject(_ offset: UInt32) -> String { "\(name) line \(offset)" }

    /// Requests `offset` as an input reporting both edges (`gpiod_line_request_both_edges_events_flags`).
    func requestEdgeEvents(offset: UInt32, flags: LineRequestFlags) -> Result<RequestedLine, GPIOError> {
        line(offset).flatMap { line in
            functions.check("gpiod_line_request_both_edges_events_flags", subject(offset)) {
                functions.lineRequestBothEdges(line, gpioConsumer, flags.rawValue)
            }.map { _ in RequestedLine(chip: self, handle: line, offset: offset) }
        }
    }

    /// Requests `offset` as an output, initially inactive (`gpiod_line_request_output_flags`).
    func requestOutput(offset: UInt32, flags: LineRequestFlags) -> Result<RequestedLine, GPIOError> {
        line(offset).flatMap { line in
            functions.check("gpiod_line_request_output_flags", subject(offset)) {
                functions.lineRequestOutput(line, gpioConsumer, flags.rawValue, 0)
            }.map { _ in RequestedLine(chip: self, handle: line, offset: offset) }
        }
    }

    private func line(_ offset: UInt32) -> Result<OpaquePointer, GPIOError> {
        functions.check("gpiod_chip_get_line", "\(subject(offset)) (the chip has \(functions.chipNumLines(handle)) lines)") {
            functions.chipGetLine(handle, offset)
        }
    }

    deinit { functions.chipClose(handle) }
}

/// A requested line: the `struct gpiod_line *` from `gpiod_chip_get_line`,
/// released with `gpiod_line_release` in deinit. It keeps its chip open.
///
/// `@unchecked Sendable` for the reason given on `GPIOChip`.
final class RequestedLine: @unchecked Sendable {
    let chip: GPIOChip
    let handle: OpaquePointer
    let offset: UInt32

    fileprivate init(chip: GPIOChip, handle: OpaquePointer, offset: UInt32) {
        self.chip = chip
        self.handle = handle
        self.offset = offset
    }

    private var functions: GPIODFunctions { chip.functions }
    private var subject: String { chip.subject(offset) }

    /// The logical value (active-low applied by the kernel): true means active.
    func value() -> Result<Bool, GPIOError> {
        functions.check("gpiod_line_get_value", subject) { functions.lineGetValue(handle) }.map { $0 != 0 }
    }

    func set(_ active: Bool) -> Result<Void, GPIOError> {
        functions.check("gpiod_line_set_value", subject) { functions.lineSetValue(handle, active ? 1 : 0) }.map { _ in () }
    }

    /// The event file descriptor to poll (`gpiod_line_event_get_fd`).
    func eventFD() -> Result<Int32, GPIOError> {
        functions.check("gpiod_line_event_get_fd", subject) { functions.lineEventGetFD(handle) }
    }

    /// Reads one pending edge (`gpiod_line_event_read_fd`): rising means the
    /// line became active, since the request carries the active-low flag.
    func readEvent(fd: Int32) -> Result<(active: Bool, at: Timestamp), GPIOError> {
        var event = gpiod_line_event()
        return functions.check("gpiod_line_event_read_fd", subject) { functions.lineEventReadFD(fd, &event) }.map { _ in
            let ns = Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec)
            return (event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), Timestamp(nanoseconds: ns))
        }
    }

    deinit { functions.lineRelease(handle) }
}
