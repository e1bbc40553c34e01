import CGPIOD
import Glibc

/// Every C call the GPIO layer makes, as one table of functions.
///
/// The product uses `.system` (libgpiod v1 and libc). Tests build a table that
/// records the call trace and injects failures (no chip, busy line, permission
/// denied, EINTR) with no hardware, as swift-system's mocking layer does.
/// `errno` is read through the table too, right after the failing call, so an
/// injected failure carries its own error number.
///
/// Handles are `OpaquePointer`s to `struct gpiod_chip` and `struct gpiod_line`.
struct GPIODFunctions: Sendable {
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
    var lineRequestBothEdges: @Sendable (OpaquePointer, String, Int32) -> Int32
    /// `gpiod_line_request_output_flags(line, consumer, flags, default_val)`.
    var lineRequestOutput: @Sendable (OpaquePointer, String, Int32, Int32) -> Int32
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
    /// `poll(2)`.
    var poll: @Sendable (UnsafeMutablePointer<pollfd>, UInt, Int32) -> Int32
    /// `eventfd(2)` with EFD_CLOEXEC, and writing/reading its counter.
    var eventfdCreate: @Sendable () -> Int32
    var eventfdWrite: @Sendable (Int32) -> Int32
    var close: @Sendable (Int32) -> Int32
    /// `clock_gettime(CLOCK_MONOTONIC)`, the clock of the kernel's event timestamps.
    var monotonicNow: @Sendable () -> Timestamp
    /// The calling thread's `errno`.
    var errno: @Sendable () -> Int32

    /// The real libraries.
    static let system = GPIODFunctions(
        chipOpenLookup: { gpiod_chip_open_lookup($0) },
        chipClose: { gpiod_chip_close($0) },
        chipName: { gpiod_chip_name($0).map { String(cString: $0) } ?? "?" },
        chipLabel: { gpiod_chip_label($0).map { String(cString: $0) } ?? "?" },
        chipNumLines: { gpiod_chip_num_lines($0) },
        chipGetLine: { gpiod_chip_get_line($0, $1) },
        lineRequestBothEdges: { gpiod_line_request_both_edges_events_flags($0, $1, $2) },
        lineRequestOutput: { gpiod_line_request_output_flags($0, $1, $2, $3) },
        lineRelease: { gpiod_line_release($0) },
        lineGetValue: { gpiod_line_get_value($0) },
        lineSetValue: { gpiod_line_set_value($0, $1) },
        lineEventGetFD: { gpiod_line_event_get_fd($0) },
        lineEventReadFD: { gpiod_line_event_read_fd($0, $1) },
        poll: { CGPIOD.poll($0, nfds_t($1), $2) },
        eventfdCreate: { CGPIOD.eventfd(0, Int32(EFD_CLOEXEC)) },
        eventfdWrite: { fd in
            var one: UInt64 = 1
            return Int32(CGPIOD.write(fd, &one, MemoryLayout<UInt64>.size))
        },
        close: { CGPIOD.close($0) },
        monotonicNow: {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
        },
        errno: { Glibc.errno }
    )
}

/// The request flags of libgpiod v1 (`GPIOD_LINE_REQUEST_FLAG_*`).
struct LineRequestFlags: OptionSet, Sendable, CustomStringConvertible {
    let rawValue: Int32

    static let activeLow = LineRequestFlags(rawValue: Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW))
    static let biasDisable = LineRequestFlags(rawValue: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE))
    static let biasPullDown = LineRequestFlags(rawValue: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN))
    static let biasPullUp = LineRequestFlags(rawValue: Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP))

    init(rawValue: Int32) { self.rawValue = rawValue }

    init(active: ActiveLevel, bias: Bias) {
        var flags: LineRequestFlags = []
        if active == .low { flags.insert(.activeLow) }
        switch bias {
        case .asIs: break
        case .disable: flags.insert(.biasDisable)
        case .pullUp: flags.insert(.biasPullUp)
        case .pullDown: flags.insert(.biasPullDown)
        }
        self = flags
    }

    var description: String {
        var names: [String] = []
        if contains(.activeLow) { names.append("ACTIVE_LOW") }
        if contains(.biasDisable) { names.append("BIAS_DISABLE") }
        if contains(.biasPullDown) { names.append("BIAS_PULL_DOWN") }
        if contains(.biasPullUp) { names.append("BIAS_PULL_UP") }
        return names.isEmpty ? "0" : names.joined(separator: "|")
    }
}
