#if LibgpiodV2
import CGPIOD
import Foundation

/// libgpiod v2 (Debian 13's 2.2): every call the GPIO layer makes, as a
/// table (see `GPIODFunctions`). Handles are `OpaquePointer`s to
/// `struct gpiod_chip` and `struct gpiod_line_request`.
///
/// v2 requests lines through settings and config objects that exist only for
/// the call; `requestLines` builds and frees them around
/// `gpiod_chip_request_lines`, so the table (and the call trace) has one
/// entry per request, as v1 has.
struct Libgpiod2Functions: Sendable {
    /// The character devices of the GPIO chips (`/dev/gpiochip*` for which
    /// `gpiod_is_gpiochip_device` holds), in chip-number order: v2 has no
    /// lookup by label, so a label is found by opening each.
    var listChips: @Sendable () -> [String]
    /// `gpiod_chip_open(path)`.
    var chipOpen: @Sendable (String) -> OpaquePointer?
    /// `gpiod_chip_close`. Requests outlive it and are released on their own.
    var chipClose: @Sendable (OpaquePointer) -> Void
    /// `gpiod_chip_get_info` with its name, label and line count (then freed).
    var chipInfo: @Sendable (OpaquePointer) -> ChipInfo?
    /// `gpiod_chip_request_lines` for one offset.
    var requestLines: @Sendable (OpaquePointer, UInt32, String, LineRequest) -> OpaquePointer?
    /// `gpiod_line_request_release`.
    var requestRelease: @Sendable (OpaquePointer) -> Void
    /// `gpiod_line_request_get_value(request, offset)`: the logical value (active-low applied), -1 on error.
    var requestGetValue: @Sendable (OpaquePointer, UInt32) -> Int32
    /// `gpiod_line_request_set_value(request, offset, value)`.
    var requestSetValue: @Sendable (OpaquePointer, UInt32, Int32) -> Int32
    /// `gpiod_line_request_get_fd`.
    var requestGetFD: @Sendable (OpaquePointer) -> Int32
    /// `gpiod_edge_event_buffer_new(capacity)` and `_free`.
    var edgeEventBufferNew: @Sendable (Int) -> OpaquePointer?
    var edgeEventBufferFree: @Sendable (OpaquePointer) -> Void
    /// `gpiod_line_request_read_edge_events(request, buffer, 1)`: 1 when an
    /// event was read into the record (type and timestamp of the buffer's
    /// event 0), -1 on error.
    var readEdgeEvent: @Sendable (OpaquePointer, OpaquePointer, UnsafeMutablePointer<EdgeEventRecord>) -> Int32

    struct ChipInfo: Sendable, Equatable {
        var name: String
        var label: String
        var numLines: UInt32
    }

    struct EdgeEventRecord: Sendable, Equatable {
        var rising = false
        var timestampNanoseconds: UInt64 = 0
    }

    static let system = Libgpiod2Functions(
        listChips: {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
            return names.filter { $0.hasPrefix("gpiochip") }
                .sorted { (Int($0.dropFirst(8)) ?? .max, $0) < (Int($1.dropFirst(8)) ?? .max, $1) }
                .map { "/dev/\($0)" }
                .filter { gpiod_is_gpiochip_device($0) }
        },
        chipOpen: { gpiod_chip_open($0) },
        chipClose: { gpiod_chip_close($0) },
        chipInfo: { chip in
            guard let info = gpiod_chip_get_info(chip) else { return nil }
            defer { gpiod_chip_info_free(info) }
            return ChipInfo(
                name: String(cString: gpiod_chip_info_get_name(info)),
                label: String(cString: gpiod_chip_info_get_label(info)),
                numLines: UInt32(gpiod_chip_info_get_num_lines(info)))
        },
        requestLines: { chip, offset, consumer, request in
            guard let settings = gpiod_line_settings_new() else { return nil }
            defer { gpiod_line_settings_free(settings) }
            switch request.direction {
            case .input:
                guard gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT) == 0,
                    gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH) == 0
                else { return nil }
            case .output(let active):
                guard gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT) == 0,
                    gpiod_line_settings_set_output_value(settings, active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) == 0
                else { return nil }
            }
            gpiod_line_settings_set_active_low(settings, request.flags.contains(.activeLow))
            let bias: gpiod_line_bias =
                request.flags.contains(.biasPullUp) ? GPIOD_LINE_BIAS_PULL_UP
                : request.flags.contains(.biasPullDown) ? GPIOD_LINE_BIAS_PULL_DOWN
                : request.flags.contains(.biasDisable) ? GPIOD_LINE_BIAS_DISABLED : GPIOD_LINE_BIAS_AS_IS
            guard gpiod_line_settings_set_bias(settings, bias) == 0 else { return nil }
            guard let lineConfig = gpiod_line_config_new() else { return nil }
            defer { gpiod_line_config_free(lineConfig) }
            var offsets = [CUnsignedInt(offset)]
            guard gpiod_line_config_add_line_settings(lineConfig, &offsets, 1, settings) == 0 else { return nil }
            guard let requestConfig = gpiod_request_config_new() else { return nil }
            defer { gpiod_request_config_free(requestConfig) }
            gpiod_request_config_set_consumer(requestConfig, consumer)
            return gpiod_chip_request_lines(chip, requestConfig, lineConfig)
        },
        requestRelease: { gpiod_line_request_release($0) },
        requestGetValue: { gpiod_line_request_get_value($0, CUnsignedInt($1)).rawValue },
        requestSetValue: { gpiod_line_request_set_value($0, CUnsignedInt($1), gpiod_line_value(rawValue: $2)) },
        requestGetFD: { gpiod_line_request_get_fd($0) },
        edgeEventBufferNew: { gpiod_edge_event_buffer_new($0) },
        edgeEventBufferFree: { gpiod_edge_event_buffer_free($0) },
        readEdgeEvent: { request, buffer, record in
            let count = gpiod_line_request_read_edge_events(request, buffer, 1)
            guard count == 1, let event = gpiod_edge_event_buffer_get_event(buffer, 0) else { return count }
            record.pointee = EdgeEventRecord(
                rising: gpiod_edge_event_get_event_type(event) == GPIOD_EDGE_EVENT_RISING_EDGE,
                timestampNanoseconds: gpiod_edge_event_get_timestamp_ns(event))
            return 1
        }
    )
}

/// One line's request: an input reporting both edges, or an output with its
/// initial logical value; active level and bias as flags.
struct LineRequest: Sendable, CustomStringConvertible {
    enum Direction: Sendable {
        case input
        case output(active: Bool)
    }

    var direction: Direction
    var flags: LineRequestFlags

    var description: String {
        switch direction {
        case .input: return "input both-edges, \(flags)"
        case .output(let active): return "output \(active ? 1 : 0), \(flags)"
        }
    }
}

/// Owns one `struct gpiod_chip *` (from `gpiod_chip_open`) and closes it in
/// deinit. Requested lines keep their chip alive, as in v1.
///
/// `@unchecked Sendable`: the handle is immutable; each request is used from
/// one place only (input lines by the watcher thread, outputs under the LED lock).
final class GPIOChip: @unchecked Sendable {
    let handle: OpaquePointer
    let functions: GPIODFunctions
    /// The chip's name, e.g. `gpiochip0`.
    let name: String
    /// Its label, e.g. `pinctrl-bcm2711`.
    let label: String
    let numLines: UInt32

    private init(handle: OpaquePointer, info: Libgpiod2Functions.ChipInfo, functions: GPIODFunctions) {
        self.handle = handle
        self.functions = functions
        self.name = info.name
        self.label = info.label
        self.numLines = info.numLines
    }

    /// Opens the first of `candidates` that exists. A candidate is a path, a
    /// name (`gpiochip0`), a number or a label, as v1's
    /// `gpiod_chip_open_lookup` took. When none opens, the error is the most
    /// telling one: a permission problem beats "not found".
    static func open(candidates: [String], functions: GPIODFunctions) -> Result<GPIOChip, GPIOError> {
        var failure: GPIOError?
        for candidate in candidates {
            switch lookup(candidate, functions) {
            case .success(let chip): return .success(chip)
            case .failure(let error): failure = preferred(failure, error)
            }
        }
        return .failure(failure ?? GPIOError(operation: "gpiod_chip_open", subject: "no chip named", errno: ENOENT))
    }

    private static func preferred(_ old: GPIOError?, _ new: GPIOError) -> GPIOError {
        guard let old, old.kind != .notFound else { return new }
        return old
    }

    private static func lookup(_ candidate: String, _ functions: GPIODFunctions) -> Result<GPIOChip, GPIOError> {
        if candidate.hasPrefix("/") { return open(path: candidate, functions) }
        if let number = UInt32(candidate) { return open(path: "/dev/gpiochip\(number)", functions) }
        if candidate.hasPrefix("gpiochip") { return open(path: "/dev/\(candidate)", functions) }
        var failure: GPIOError?
        for path in functions.gpiod.listChips() {
            switch open(path: path, functions) {
            case .success(let chip) where chip.label == candidate: return .success(chip)
            case .success: continue  // another chip; deinit closes it
            case .failure(let error): failure = preferred(failure, error)
            }
        }
        return .failure(failure ?? GPIOError(
            operation: "gpiod_chip_open", subject: "chip '\(candidate)' (no /dev/gpiochip* has that label)", errno: ENOENT))
    }

    private static func open(path: String, _ functions: GPIODFunctions) -> Result<GPIOChip, GPIOError> {
        functions.check("gpiod_chip_open", "chip '\(path)'") { functions.gpiod.chipOpen(path) }.flatMap { handle in
            let info = functions.check("gpiod_chip_get_info", "chip '\(path)'", failed: { $0 == nil }) { functions.gpiod.chipInfo(handle) }
            switch info {
            case .success(let info): return .success(GPIOChip(handle: handle, info: info!, functions: functions))
            case .failure(let error):
                functions.gpiod.chipClose(handle)
                return .failure(error)
            }
        }
    }

    func subject(_ offset: UInt32) -> String { "\(name) line \(offset)" }

    /// Requests `offset` as an input reporting both edges.
    func requestEdgeEvents(offset: UInt32, flags: LineRequestFlags) -> Result<RequestedLine, GPIOError> {
        request(offset, LineRequest(direction: .input, flags: flags)).flatMap { handle in
            let buffer = functions.check("gpiod_edge_event_buffer_new", subject(offset)) { functions.gpiod.edgeEventBufferNew(1) }
            switch buffer {
            case .success(let buffer): return .success(RequestedLine(chip: self, handle: handle, offset: offset, eventBuffer: buffer))
            case .failure(let error):
                functions.gpiod.requestRelease(handle)
                return .failure(error)
            }
        }
    }

    /// Requests `offset` as an output, initially inactive.
    func requestOutput(offset: UInt32, flags: LineRequestFlags) -> Result<RequestedLine, GPIOError> {
        request(offset, LineRequest(direction: .output(active: false), flags: flags)).map {
            RequestedLine(chip: self, handle: $0, offset: offset, eventBuffer: nil)
        }
    }

    private func request(_ offset: UInt32, _ request: LineRequest) -> Result<OpaquePointer, GPIOError> {
        functions.check("gpiod_chip_request_lines", "\(subject(offset)) (the chip has \(numLines) lines)") {
            functions.gpiod.requestLines(handle, offset, gpioConsumer, request)
        }
    }

    deinit { functions.gpiod.chipClose(handle) }
}

/// A requested line: the `struct gpiod_line_request *` of one offset,
/// released with `gpiod_line_request_release` in deinit. It keeps its chip
/// open. Inputs own a one-event buffer for `gpiod_line_request_read_edge_events`.
///
/// `@unchecked Sendable` for the reason given on `GPIOChip`.
final class RequestedLine: @unchecked Sendable {
    let chip: GPIOChip
    let handle: OpaquePointer
    let offset: UInt32
    private let eventBuffer: OpaquePointer?

    fileprivate init(chip: GPIOChip, handle: OpaquePointer, offset: UInt32, eventBuffer: OpaquePointer?) {
        self.chip = chip
        self.handle = handle
        self.offset = offset
        self.eventBuffer = eventBuffer
    }

    private var functions: GPIODFunctions { chip.functions }
    private var subject: String { chip.subject(offset) }

    /// The logical value (active-low applied by the kernel): true means active.
    func value() -> Result<Bool, GPIOError> {
        functions.check("gpiod_line_request_get_value", subject) { functions.gpiod.requestGetValue(handle, offset) }.map { $0 != 0 }
    }

    func set(_ active: Bool) -> Result<Void, GPIOError> {
        functions.check("gpiod_line_request_set_value", subject) {
            functions.gpiod.requestSetValue(handle, offset, active ? 1 : 0)
        }.map { _ in () }
    }

    /// The event file descriptor to poll (`gpiod_line_request_get_fd`).
    func eventFD() -> Result<Int32, GPIOError> {
        functions.check("gpiod_line_request_get_fd", subject) { functions.gpiod.requestGetFD(handle) }
    }

    /// Reads one pending edge: rising means the line became active, since the
    /// request carries the active-low setting. `fd` is the request's own
    /// descriptor, which v2 reads through the request.
    func readEvent(fd: Int32) -> Result<(active: Bool, at: Timestamp), GPIOError> {
        guard let eventBuffer else {
            return .failure(GPIOError(operation: "gpiod_line_request_read_edge_events", subject: "\(subject) (an output)", errno: EINVAL))
        }
        var record = Libgpiod2Functions.EdgeEventRecord()
        return functions.check("gpiod_line_request_read_edge_events", subject) {
            functions.gpiod.readEdgeEvent(handle, eventBuffer, &record)
        }.map { _ in
            (record.rising, Timestamp(nanoseconds: Int64(clamping: record.timestampNanoseconds)))
        }
    }

    deinit {
        functions.gpiod.requestRelease(handle)
        if let eventBuffer { functions.gpiod.edgeEventBufferFree(eventBuffer) }
    }
}
#endif
