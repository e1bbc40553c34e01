import CGPIOD
import Glibc

/// Every C call the GPIO layer makes, as one table of functions.
///
/// The product uses `.system` (libgpiod and libc). Tests build a table that
/// records the call trace and injects failures (no chip, busy line, permission
/// denied, EINTR) with no hardware, as swift-system's mocking layer does.
/// `errno` is read through the table too, right after the failing call, so an
/// injected failure carries its own error number.
///
/// libgpiod's calls are in `gpiod`: `Libgpiod1Functions` (the v1 API, Debian
/// 12's 1.6) or `Libgpiod2Functions` (the v2 API, Debian 13's 2.2), chosen at
/// build time by the package trait `LibgpiodV2` (see Package.swift); the two
/// APIs share no function, so only one of them can be compiled.
struct GPIODFunctions: Sendable {
    #if LibgpiodV2
    var gpiod: Libgpiod2Functions
    #else
    var gpiod: Libgpiod1Functions
    #endif
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
        gpiod: .system,
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

/// How a line is requested: active level and bias. Parley's own bits; each
/// libgpiod version's table turns them into its API's flags or settings.
struct LineRequestFlags: OptionSet, Sendable, CustomStringConvertible {
    let rawValue: Int32

    static let activeLow = LineRequestFlags(rawValue: 1 << 0)
    static let biasDisable = LineRequestFlags(rawValue: 1 << 1)
    static let biasPullDown = LineRequestFlags(rawValue: 1 << 2)
    static let biasPullUp = LineRequestFlags(rawValue: 1 << 3)

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

/// The consumer name every line is requested with; `gpioinfo` shows it.
let gpioConsumer = "parley"
