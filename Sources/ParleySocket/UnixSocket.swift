import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unix stream socket helpers (C: `socket(AF_UNIX)`, `struct sockaddr_un`).
package enum UnixSocket {
    /// `sun_path` holds 108 bytes including the terminating NUL.
    package static let maxPathLength = 107

    package static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) throws -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maxPathLength else {
            throw SocketCallError(call: "socket path too long", path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    package static func makeSocket(_ path: String) throws -> Int32 {
        #if canImport(Glibc)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        return try systemCall("socket", path) { socket(AF_UNIX, type, 0) }
    }

    /// Connects to the socket at `path`; the caller owns the descriptor.
    package static func connect(to path: String) throws -> Int32 {
        let fd = try makeSocket(path)
        do {
            let rc = try withAddress(path) { address, length in
                #if canImport(Glibc)
                    Glibc.connect(fd, address, length)
                #else
                    Darwin.connect(fd, address, length)
                #endif
            }
            if rc < 0 { throw SocketCallError(call: "connect", path: path, errno: errno) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// A listening socket at `path` with file mode `mode` and, when `group`
    /// is given, that group (so only its members may connect). The caller
    /// owns the descriptor; on failure nothing is left open.
    package static func listen(path: String, mode: mode_t, group: (name: String, id: gid_t)?, backlog: Int32) throws -> Int32 {
        let fd = try makeSocket(path)
        do {
            let bound = try withAddress(path) { address, length in bind(fd, address, length) }
            if bound < 0 { throw SocketCallError(call: "bind", path: path, errno: errno) }
            try systemCall("chmod 0\(String(mode, radix: 8))", path) { chmod(path, mode) }
            if let group { try systemCall("chown :\(group.name)", path) { chown(path, uid_t.max, group.id) } }
            #if canImport(Glibc)
                try systemCall("listen", path) { Glibc.listen(fd, backlog) }
            #else
                try systemCall("listen", path) { Darwin.listen(fd, backlog) }
            #endif
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Writes all of `data`, retrying on EINTR and short writes.
    package static func writeAll(_ fd: Int32, _ data: Data, path: String) throws {
        var offset = 0
        while offset < data.count {
            let written = try data.withUnsafeBytes { raw throws in
                try systemCall("write", path) {
                    Int32(truncatingIfNeeded: send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)))
                }
            }
            offset += Int(written)
        }
    }
}
