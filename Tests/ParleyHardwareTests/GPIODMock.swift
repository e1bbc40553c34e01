import CGPIOD
import Glibc
import Synchronization

@testable import ParleyHardware

/// A libgpiod function table for tests, for the v1 or the v2 API (whichever
/// the build chose): records the call trace, injects errno failures, and
/// stands in for a chip with no hardware. Each input line's event descriptor
/// is the read end of a pipe into which `sendEdges` writes kernel
/// `gpioevent_data` records, decoded by the real `gpiod_line_event_read_fd`
/// (v1) or by the mock (v2); poll, eventfd and the clock are the real ones.
final class GPIODMock: Sendable {
    /// The libgpiod functions the tests name in traces and expected messages, per API.
    enum Call {
        #if LibgpiodV2
        static let chipOpen = "gpiod_chip_open"
        /// v2 has no separate line lookup: an offset the chip lacks fails the request.
        static let lineLookup = "gpiod_chip_request_lines"
        static let requestInput = "gpiod_chip_request_lines"
        /// Requests made before the button's (v2 requests the LEDs with the same call).
        static let requestsBeforeButton = 2
        static let getValue = "gpiod_line_request_get_value"
        static let setValue = "gpiod_line_request_set_value"
        static let eventFD = "gpiod_line_request_get_fd"
        static let readEvent = "gpiod_line_request_read_edge_events"
        #else
        static let chipOpen = "gpiod_chip_open_lookup"
        static let lineLookup = "gpiod_chip_get_line"
        static let requestInput = "gpiod_line_request_both_edges_events_flags"
        static let requestsBeforeButton = 0
        static let getValue = "gpiod_line_get_value"
        static let setValue = "gpiod_line_set_value"
        static let eventFD = "gpiod_line_event_get_fd"
        static let readEvent = "gpiod_line_event_read_fd"
        #endif
    }

    private struct State {
        var trace: [String] = []
        var errno: Int32 = 0
        /// Failures to inject, per C function name, consumed in order (nil: that call succeeds).
        var failures: [String: [Int32?]] = [:]
        /// Chips that exist, by the names `gpiod_chip_open_lookup` accepts (v1).
        var chips: Set<String> = ["gpiochip0", "pinctrl-bcm2711"]
        /// Chips that exist, by device path, with their labels (v2), and the
        /// paths opened, in order (a chip handle is its index here).
        var chipPaths: [String: String] = ["/dev/gpiochip0": "pinctrl-bcm2711"]
        var openedPaths: [String] = []
        var lineValues: [UInt32: Int32] = [:]
        var pipes: [UInt32: (read: Int32, write: Int32)] = [:]
        var openChips = 0
        var requested: Set<UInt32> = []
    }

    private let state = Mutex(State())
    private static var chipHandle: OpaquePointer { OpaquePointer(bitPattern: 0x1000)! }

    /// Makes the next `times` calls of `function`, after `after` that succeed, fail with `errno`.
    func fail(_ function: String, errno: Int32, times: Int = 1, after: Int = 0) {
        state.withLock {
            $0.failures[function, default: []] += Array(repeating: nil, count: after) + Array(repeating: errno, count: times)
        }
    }

    /// The chips by device path, with their labels (v2's lookup).
    func setChipPaths(_ chips: [String: String]) { state.withLock { $0.chipPaths = chips } }
    /// No GPIO chip at all.
    func removeAllChips() { state.withLock { $0.chips = []; $0.chipPaths = [:] } }
    func setValue(_ offset: UInt32, _ value: Int32) { state.withLock { $0.lineValues[offset] = value } }

    var trace: [String] { state.withLock { $0.trace } }
    /// The trace without the event loop's own calls (poll, read, eventfd).
    var gpiodTrace: [String] { trace.filter { $0.hasPrefix("gpiod_") } }
    var openChips: Int { state.withLock { $0.openChips } }
    var requestedLines: Set<UInt32> { state.withLock { $0.requested } }
    func lineValue(_ offset: UInt32) -> Int32? { state.withLock { $0.lineValues[offset] } }

    /// Writes kernel edge events (rising = active) for `offset` in one write,
    /// so the watcher sees them all queued at once.
    func sendEdges(_ offset: UInt32, _ edges: [(active: Bool, at: Timestamp)]) {
        guard let fd = state.withLock({ $0.pipes[offset]?.write }) else { return }
        var bytes: [UInt8] = []
        for edge in edges {
            // struct gpioevent_data { __u64 timestamp; __u32 id; } (16 bytes with padding)
            withUnsafeBytes(of: UInt64(edge.at.nanoseconds).littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt32(edge.active ? 1 : 2).littleEndian) { bytes += $0 }
            bytes += [0, 0, 0, 0]
        }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        precondition(written == bytes.count)
    }

    deinit {
        for pipe in state.withLock({ $0.pipes.values }) {
            _ = Glibc.close(pipe.read)
            _ = Glibc.close(pipe.write)
        }
    }

    /// Records `call`; if a failure is queued for `function`, sets errno and returns true.
    private func record(_ function: String, _ call: String) -> Bool {
        state.withLock { s in
            s.trace.append("\(function)(\(call))")
            guard var queue = s.failures[function], !queue.isEmpty else { return false }
            let code = queue.removeFirst()
            s.failures[function] = queue
            guard let code else { return false }
            s.errno = code
            return true
        }
    }

    private static func lineHandle(_ offset: UInt32) -> OpaquePointer { OpaquePointer(bitPattern: 0x10000 + Int(offset) * 16)! }
    private static func offset(_ line: OpaquePointer) -> UInt32 { UInt32((Int(bitPattern: UnsafeRawPointer(line)) - 0x10000) / 16) }

    var functions: GPIODFunctions {
        #if LibgpiodV2
        var table = GPIODFunctions.system
        var gpiod = table.gpiod
        gpiod.listChips = { [self] in state.withLock { $0.chipPaths.keys.sorted() } }
        gpiod.chipOpen = { [self] path in
            if record("gpiod_chip_open", path) { return nil }
            return state.withLock { s in
                guard s.chipPaths[path] != nil else { s.errno = ENOENT; return nil }
                s.openChips += 1
                s.openedPaths.append(path)
                return OpaquePointer(bitPattern: 0x1000 + s.openedPaths.count * 16)!
            }
        }
        gpiod.chipClose = { [self] _ in
            _ = record("gpiod_chip_close", "")
            state.withLock { $0.openChips -= 1 }
        }
        gpiod.chipInfo = { [self] chip in
            if record("gpiod_chip_get_info", "") { return nil }
            return state.withLock { s in
                let path = s.openedPaths[(Int(bitPattern: UnsafeRawPointer(chip)) - 0x1000) / 16 - 1]
                return .init(name: String(path.dropFirst(5)), label: s.chipPaths[path] ?? "?", numLines: 58)
            }
        }
        gpiod.requestLines = { [self] _, offset, consumer, request in
            if record("gpiod_chip_request_lines", "\(offset), \(consumer), \(request)") { return nil }
            guard offset < 58 else { state.withLock { $0.errno = EINVAL }; return nil }
            switch request.direction {
            case .input:
                var fds: [Int32] = [0, 0]
                guard Glibc.pipe(&fds) == 0 else { return nil }
                state.withLock { $0.pipes[offset] = (fds[0], fds[1]) }
            case .output(let active):
                state.withLock { $0.lineValues[offset] = active ? 1 : 0 }
            }
            state.withLock { _ = $0.requested.insert(offset) }
            return Self.lineHandle(offset)
        }
        gpiod.requestRelease = { [self] request in
            let offset = Self.offset(request)
            _ = record("gpiod_line_request_release", "\(offset)")
            state.withLock { _ = $0.requested.remove(offset) }
        }
        gpiod.requestGetValue = { [self] _, offset in
            if record("gpiod_line_request_get_value", "\(offset)") { return -1 }
            return state.withLock { $0.lineValues[offset] ?? 0 }
        }
        gpiod.requestSetValue = { [self] _, offset, value in
            if record("gpiod_line_request_set_value", "\(offset), \(value)") { return -1 }
            state.withLock { $0.lineValues[offset] = value }
            return 0
        }
        gpiod.requestGetFD = { [self] request in
            let offset = Self.offset(request)
            _ = record("gpiod_line_request_get_fd", "\(offset)")
            return state.withLock { $0.pipes[offset]?.read ?? -1 }
        }
        // The kernel's v2 records cannot be fed to the real reader without a
        // real request, so the mock decodes the pipe's records itself (in the
        // format `sendEdges` writes); the real event buffer is still allocated.
        gpiod.readEdgeEvent = { [self] request, _, event in
            let offset = Self.offset(request)
            if record("gpiod_line_request_read_edge_events", "\(offset)") { return -1 }
            guard let fd = state.withLock({ $0.pipes[offset]?.read }) else { return -1 }
            var bytes = [UInt8](repeating: 0, count: 16)
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 16) }
            guard count == 16 else {
                let code = count < 0 ? Glibc.errno : EIO
                state.withLock { $0.errno = code }
                return -1
            }
            let timestamp = bytes[0..<8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
            event.pointee = .init(rising: bytes[8] == 1, timestampNanoseconds: timestamp)
            return 1
        }
        table.gpiod = gpiod
        #else
        var table = GPIODFunctions.system
        var gpiod = table.gpiod
        gpiod.chipOpenLookup = { [self] name in
            if record("gpiod_chip_open_lookup", name) { return nil }
            return state.withLock { s in
                guard s.chips.contains(name) else { s.errno = ENOENT; return nil }
                s.openChips += 1
                return Self.chipHandle
            }
        }
        gpiod.chipClose = { [self] _ in
            _ = record("gpiod_chip_close", "")
            state.withLock { $0.openChips -= 1; $0.requested = [] }
        }
        gpiod.chipName = { _ in "gpiochip0" }
        gpiod.chipLabel = { _ in "pinctrl-bcm2711" }
        gpiod.chipNumLines = { _ in 58 }
        gpiod.chipGetLine = { [self] _, offset in
            if record("gpiod_chip_get_line", "\(offset)") { return nil }
            guard offset < 58 else { state.withLock { $0.errno = EINVAL }; return nil }
            return Self.lineHandle(offset)
        }
        gpiod.lineRequestBothEdges = { [self] line, consumer, flags in
            let offset = Self.offset(line)
            if record("gpiod_line_request_both_edges_events_flags", "\(offset), \(consumer), \(flags)") { return -1 }
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else { return -1 }
            state.withLock { $0.pipes[offset] = (fds[0], fds[1]); $0.requested.insert(offset) }
            return 0
        }
        gpiod.lineRequestOutput = { [self] line, consumer, flags, value in
            let offset = Self.offset(line)
            if record("gpiod_line_request_output_flags", "\(offset), \(consumer), \(flags), \(value)") { return -1 }
            state.withLock { $0.lineValues[offset] = value; $0.requested.insert(offset) }
            return 0
        }
        gpiod.lineRelease = { [self] line in
            let offset = Self.offset(line)
            _ = record("gpiod_line_release", "\(offset)")
            state.withLock { _ = $0.requested.remove(offset) }
        }
        gpiod.lineGetValue = { [self] line in
            let offset = Self.offset(line)
            if record("gpiod_line_get_value", "\(offset)") { return -1 }
            return state.withLock { $0.lineValues[offset] ?? 0 }
        }
        gpiod.lineSetValue = { [self] line, value in
            let offset = Self.offset(line)
            if record("gpiod_line_set_value", "\(offset), \(value)") { return -1 }
            state.withLock { $0.lineValues[offset] = value }
            return 0
        }
        gpiod.lineEventGetFD = { [self] line in
            let offset = Self.offset(line)
            _ = record("gpiod_line_event_get_fd", "\(offset)")
            return state.withLock { $0.pipes[offset]?.read ?? -1 }
        }
        gpiod.lineEventReadFD = { [self] fd, event in
            if record("gpiod_line_event_read_fd", "") { return -1 }
            let result = gpiod_line_event_read_fd(fd, event)
            if result < 0 { let code = Glibc.errno; state.withLock { $0.errno = code } }
            return result
        }
        table.gpiod = gpiod
        #endif
        table.poll = { [self] fds, count, timeout in
            if record("poll", "\(timeout)") { return -1 }
            let result = Glibc.poll(fds, nfds_t(count), timeout)
            if result < 0 { let code = Glibc.errno; state.withLock { $0.errno = code } }
            return result
        }
        table.errno = { [self] in state.withLock { $0.errno } }
        return table
    }
}
