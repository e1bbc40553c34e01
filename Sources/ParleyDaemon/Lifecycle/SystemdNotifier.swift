import Foundation
import ParleySocket

#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram to `$NOTIFY_SOCKET` per
/// state change, so the unit can be `Type=notify` ("READY=1" once the control
/// socket listens, "STOPPING=1" at shutdown). Does nothing when not started
/// by systemd.
public struct SystemdNotifier: Sendable {
    private let path: String?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public var isActive: Bool { path != nil }

    /// Sends e.g. "READY=1\nSTATUS=listening"; returns false if it could not.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard let path else { return false }
        #if canImport(Glibc)
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // "@name" is an abstract socket: a leading NUL, and no terminator.
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        guard bytes.count <= UnixSocket.maxPathLength else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let payload = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sockaddrPointer, length) }
            }
        }
        return sent == payload.count
    }
}
