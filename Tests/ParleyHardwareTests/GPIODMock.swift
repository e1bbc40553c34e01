import CGPIOD
import Glibc
import Synchronization

@testable import ParleyHardware

/// A libgpiod function table for tests: records the call trace, injects errno
/// failures, and stands in for a chip with no hardware. Each input line's
/// event descriptor is the read end of a pipe into which `sendEdges` writes
/// kernel `gpioevent_data` records, decoded by the real
/// `gpiod_line_event_read_fd`; poll, eventfd and the clock are the real ones.
final class GPIODMock: Sendable {
    private struct State {
        var trace: [String] = []
        var errno: Int32 = 0
        /// Failures to inject, per C function name, consumed in order.
        var failures: [String: [Int32]] = [:]
        /// Chips that exist, by the names `gpiod_chip_open_lookup` accepts.
        var chips: Set<String> = ["gpiochip0", "pinctrl-bcm2711"]
        var lineValues: [UInt32: Int32] = [:]
        var pipes: [UInt32: (read: Int32, write: Int32)] = [:]
        var openChips = 0
        var requested: Set<UInt32> = []
    }

    private let state = Mutex(State())
    private static var chipHandle: OpaquePointer { OpaquePointer(bitPattern: 0x1000)! }

    /// Makes the next `times` calls of `function` fail with `errno`.
    func fail(_ function: String, errno: Int32, times: Int = 1) {
        state.withLock { $0.failures[function, default: []] += Array(repeating: errno, count: times) }
    }

    func setChips(_ names: Set<String>) { state.withLock { $0.chips = names } }
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
            s.errno = queue.removeFirst()
            s.failures[function] = queue
            return true
        }
    }

    private static func lineHandle(_ offset: UInt32) -> OpaquePointer { OpaquePointer(bitPattern: 0x10000 + Int(offset) * 16)! }
    private static func offset(_ line: OpaquePointer) -> UInt32 { UInt32((Int(bitPattern: UnsafeRawPointer(line)) - 0x10000) / 16) }

    var functions: GPIODFunctions {
        var table = GPIODFunctions.system
        table.chipOpenLookup = { [self] name in
            if record("gpiod_chip_open_lookup", name) { return nil }
            return state.withLock { s in
                guard s.chips.contains(name) else { s.errno = ENOENT; return nil }
                s.openChips += 1
                return Self.chipHandle
            }
        }
        table.chipClose = { [self] _ in
            _ = record("gpiod_chip_close", "")
            state.withLock { $0.openChips -= 1; $0.requested = [] }
        }
        table.chipName = { _ in "gpiochip0" }
        table.chipLabel = { _ in "pinctrl-bcm2711" }
        table.chipNumLines = { _ in 58 }
        table.chipGetLine = { [self] _, offset in
            if record("gpiod_chip_get_line", "\(offset)") { return nil }
            guard offset < 58 else { state.withLock { $0.errno = EINVAL }; return nil }
            return Self.lineHandle(offset)
        }
        table.lineRequestBothEdges = { [self] line, consumer, flags in
            let offset = Self.offset(line)
            if record("gpiod_line_request_both_edges_events_flags", "\(offset), \(consumer), \(LineRequestFlags(rawValue: flags))") { return -1 }
            var fds: [Int32] = [0, 0]
            guard Glibc.pipe(&fds) == 0 else { return -1 }
            state.withLock { $0.pipes[offset] = (fds[0], fds[1]); $0.requested.insert(offset) }
            return 0
        }
        table.lineRequestOutput = { [self] line, consumer, flags, value in
            let offset = Self.offset(line)
            if record("gpiod_line_request_output_flags", "\(offset), \(consumer), \(LineRequestFlags(rawValue: flags)), \(value)") { return -1 }
            state.withLock { $0.lineValues[offset] = value; $0.requested.insert(offset) }
            return 0
        }
        table.lineRelease = { [self] line in
            let offset = Self.offset(line)
            _ = record("gpiod_line_release", "\(offset)")
            state.withLock { _ = $0.requested.remove(offset) }
        }
        table.lineGetValue = { [self] line in
            let offset = Self.offset(line)
            if record("gpiod_line_get_value", "\(offset)") { return -1 }
            return state.withLock { $0.lineValues[offset] ?? 0 }
        }
        table.lineSetValue = { [self] line, value in
            let offset = Self.offset(line)
            if record("gpiod_line_set_value", "\(offset), \(value)") { return -1 }
            state.withLock { $0.lineValues[offset] = value }
            return 0
        }
        table.lineEventGetFD = { [self] line in
            let offset = Self.offset(line)
            _ = record("gpiod_line_event_get_fd", "\(offset)")
            return state.withLock { $0.pipes[offset]?.read ?? -1 }
        }
        table.lineEventReadFD = { [self] fd, event in
            if record("gpiod_line_event_read_fd", "") { return -1 }
            let result = gpiod_line_event_read_fd(fd, event)
            if result < 0 { let code = Glibc.errno; state.withLock { $0.errno = code } }
            return result
        }
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
