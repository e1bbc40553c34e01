import Glibc

/// A failed libgpiod or libc call, with the C function, what it was used on
/// and errno, translated into words and a hint for the person reading the log.
public struct GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// ENOENT, ENODEV, ENXIO: no such chip (or it went away).
        case notFound
        /// EBUSY: another program (or a kernel driver) holds the line.
        case busy
        /// EACCES, EPERM: the daemon's user may not open /dev/gpiochip*.
        case permissionDenied
        /// EINVAL: an offset the chip does not have, or a flag the kernel does not support.
        case invalidArgument
        case other
    }

    /// The C function that failed, e.g. `gpiod_chip_open_lookup`.
    public var operation: String
    /// What it was called on, e.g. `chip 'pinctrl-rp1'` or `gpiochip0 line 17`.
    public var subject: String
    public var errno: Int32

    public init(operation: String, subject: String, errno: Int32) {
        self.operation = operation
        self.subject = subject
        self.errno = errno
    }

    public var kind: Kind {
        switch errno {
        case ENOENT, ENODEV, ENXIO: return .notFound
        case EBUSY: return .busy
        case EACCES, EPERM: return .permissionDenied
        case EINVAL: return .invalidArgument
        default: return .other
        }
    }

    public var description: String {
        "\(operation) failed for \(subject): \(explanation) (\(Self.name(of: errno)))"
    }

    private var explanation: String {
        switch kind {
        case .notFound: return "no such GPIO chip or line; check the board file's chip against `gpiodetect`"
        case .busy: return "the line is in use by another program or driver; see `gpioinfo`"
        case .permissionDenied: return "permission denied; the daemon's user needs access to /dev/gpiochip* (group gpio)"
        case .invalidArgument: return "invalid offset or flags for this chip and kernel"
        case .other: return String(cString: strerror(errno))
        }
    }

    static func name(of code: Int32) -> String {
        switch code {
        case ENOENT: return "ENOENT"
        case ENODEV: return "ENODEV"
        case ENXIO: return "ENXIO"
        case EBUSY: return "EBUSY"
        case EACCES: return "EACCES"
        case EPERM: return "EPERM"
        case EINVAL: return "EINVAL"
        case EINTR: return "EINTR"
        case EIO: return "EIO"
        default: return "errno \(code)"
        }
    }
}

extension GPIODFunctions {
    /// The one place C failures become Swift errors: runs `call`, and when
    /// `failed` says it failed, reads errno at once; EINTR is retried.
    func check<T>(_ operation: String, _ subject: @autoclosure () -> String, failed: (T) -> Bool, _ call: () -> T) -> Result<T, GPIOError> {
        while true {
            let value = call()
            if !failed(value) { return .success(value) }
            let code = errno()
            if code == EINTR { continue }
            return .failure(GPIOError(operation: operation, subject: subject(), errno: code))
        }
    }

    /// For calls that return -1 and set errno.
    func check(_ operation: String, _ subject: @autoclosure () -> String, _ call: () -> Int32) -> Result<Int32, GPIOError> {
        check(operation, subject(), failed: { $0 < 0 }, call)
    }

    /// For calls that return NULL and set errno.
    func check(_ operation: String, _ subject: @autoclosure () -> String, _ call: () -> OpaquePointer?) -> Result<OpaquePointer, GPIOError> {
        check(operation, subject(), failed: { $0 == nil }, call).map { $0! }
    }
}
