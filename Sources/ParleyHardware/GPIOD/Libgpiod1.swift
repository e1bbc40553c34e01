#if !LibgpiodV2
import CGPIOD

/// libgpiod v1 (Debian 12's 1.6): every call the GPIO layer makes, as a
/// table (see `GPIODFunctions`). Handles are `OpaquePointer`s to
/// `struct gpiod_chip` and `struct gpiod_line`.
struct Libgpiod1Functions: Sendable {
    /// `gpiod_chip_open_lookup`: by label, name, path or number.
    var chipOpenLookup: @Sendable (String) -> OpaquePointer?
    /// `gpiod_chip_close`: also releases every line requested from the chip.
    var chipClose: @Sendable (OpaquePointer) -> Void
    /// `gpiod_chip_name` and `gpiod_chip_label`, for log messages.
    var chipName: @Sendable (OpaquePointer) -> String
    var chipLabel: @Sendable (OpaquePointer) -> String
    /// `gpiod_chip_num_lines`.
    var chipNumLines: @Sendable (OpaquePointer) -> UInt32
    /// `gpiod_chip_get_line`: the line object belongs to the chip and is not freed separately.
    var chipGetLine: @Sendable (OpaquePointer, UInt32) -> OpaquePointer?
    /// `gpiod_line_request_both_edges_events_flags(line, consumer, flags)`.
    var lineRequestBothEdges: @Sendable (OpaquePointer, String, LineRequestFlags) -> Int32
    /// `gpiod_line_request_output_flags(line, consumer, flags, default_val)`.
    var lineRequestOutput: @Sendable (OpaquePointer, String, LineRequestFlags, Int32) -> Int32
    /// `gpiod_line_release`.
    var lineRelease: @Sendable (OpaquePointer) -> Void
    /// `gpiod_line_get_value`: the logical value (active-low already applied).
    var lineGetValue: @Sendable (OpaquePointer) -> Int32
    /// `gpiod_line_set_value`.
    var lineSetValue: @Sendable (OpaquePointer, Int32) -> Int32
    /// `gpiod_line_event_get_fd`.
    var lineEventGetFD: @Sendable (OpaquePointer) -> Int32
    /// `gpiod_line_event_read_fd`: reads one kernel `gpioevent_data` and converts it.
    var lineEventReadFD: @Sendable (Int32, UnsafeMutablePointer<gpiod_line_event>) -> Int32

    static let system = Libgpiod1Functions(
        chipOpenLookup: { gpiod_chip_open_lookup($0) },
        chipClose: { gpiod_chip_close($0) },
        chipName: { gpiod_chip_name($0).map { String(cString: $0) } ?? "?" },
        chipLabel: { gpiod_chip_label($0).map { String(cString: $0) } ?? "?" },
        chipNumLines: { gpiod_chip_num_lines($0) },
        chipGetLine: { gpiod_chip_get_line($0, $1) },
        lineRequestBothEdges: { gpiod_line_request_both_edges_events_flags($0, $1, $2.libgpiod1) },
        lineRequestOutput: { gpiod_line_request_output_flags($0, $1, $2.libgpiod1, $3) },
        lineRelease: { gpiod_line_release($0) },
        lineGetValue: { gpiod_line_get_value($0) },
        lineSetValue: { gpiod_line_set_value($0, $1) },
        lineEventGetFD: { gpiod_line_event_get_fd($0) },
        lineEventReadFD: { gpiod_line_event_read_fd($0, $1) }
    )
}

extension LineRequestFlags {
    /// `GPIOD_LINE_REQUEST_FLAG_*`.
    var libgpiod1: Int32 {
        var flags: Int32 = 0
        if contains(.activeLow) { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
        if contains(.biasDisable) { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE) }
        if contains(.biasPullDown) { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN) }
        if contains(.biasPullUp) { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP) }
        return flags
    }
}

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
        self.name = functions.gpiod.chipName(handle)
        self.label = functions.gpiod.chipLabel(handle)
    }

    /// Opens the first of `candidates` that exists. When none opens, the error
    /// is the most telling one: a permission problem beats "not found".
    static func open(candidates: [String], functions: GPIODFunctions) -> Result<GPIOChip, GPIOError> {
        var failure: GPIOError?
        for candidate in candidates {
            switch functions.check("gpiod_chip_open_lookup", "chip '\(candidate)'", { functions.gpiod.chipOpenLookup(candidate) }) {
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
                functions.gpiod.lineRequestBothEdges(line, gpioConsumer, flags)
            }.map { _ in RequestedLine(chip: self, handle: line, offset: offset) }
        }
    }

    /// Requests `offset` as an output, initially inactive (`gpiod_line_request_output_flags`).
    func requestOutput(offset: UInt32, flags: LineRequestFlags) -> Result<RequestedLine, GPIOError> {
        line(offset).flatMap { line in
            functions.check("gpiod_line_request_output_flags", subject(offset)) {
                functions.gpiod.lineRequestOutput(line, gpioConsumer, flags, 0)
            }.map { _ in RequestedLine(chip: self, handle: line, offset: offset) }
        }
    }

    private func line(_ offset: UInt32) -> Result<OpaquePointer, GPIOError> {
        functions.check("gpiod_chip_get_line", "\(subject(offset)) (the chip has \(functions.gpiod.chipNumLines(handle)) lines)") {
            functions.gpiod.chipGetLine(handle, offset)
        }
    }

    deinit { functions.gpiod.chipClose(handle) }
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
        functions.check("gpiod_line_get_value", subject) { functions.gpiod.lineGetValue(handle) }.map { $0 != 0 }
    }

    func set(_ active: Bool) -> Result<Void, GPIOError> {
        functions.check("gpiod_line_set_value", subject) { functions.gpiod.lineSetValue(handle, active ? 1 : 0) }.map { _ in () }
    }

    /// The event file descriptor to poll (`gpiod_line_event_get_fd`).
    func eventFD() -> Result<Int32, GPIOError> {
        functions.check("gpiod_line_event_get_fd", subject) { functions.gpiod.lineEventGetFD(handle) }
    }

    /// Reads one pending edge (`gpiod_line_event_read_fd`): rising means the
    /// line became active, since the request carries the active-low flag.
    func readEvent(fd: Int32) -> Result<(active: Bool, at: Timestamp), GPIOError> {
        var event = gpiod_line_event()
        return functions.check("gpiod_line_event_read_fd", subject) { functions.gpiod.lineEventReadFD(fd, &event) }.map { _ in
            let ns = Int64(event.ts.tv_sec) * 1_000_000_000 + Int64(event.ts.tv_nsec)
            return (event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), Timestamp(nanoseconds: ns))
        }
    }

    deinit { functions.gpiod.lineRelease(handle) }
}
#endif
