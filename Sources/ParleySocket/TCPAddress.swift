#if canImport(Glibc)
    import Glibc
#endif

/// IPv4 TCP addresses: listening and connecting.
package enum TCPAddress {
    package static func withAddress<T>(host: String, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T)
        throws(SocketCallError) -> T
    {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        if inet_pton(AF_INET, host, &address.sin_addr) != 1 {
            // A name: the first IPv4 address it resolves to.
            var hints = addrinfo()
            hints.ai_family = AF_INET
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list, let found = first.pointee.ai_addr else {
                throw SocketCallError(call: "resolve", address: host, errno: EHOSTUNREACH)
            }
            defer { freeaddrinfo(list) }
            found.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address.sin_addr = $0.pointee.sin_addr }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    package static func makeSocket(_ address: String) throws(SocketCallError) -> Int32 {
        try systemCall("socket", address) { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
    }

    /// `source`: the local address to connect from (tests play LAN peers
    /// from 127.0.0.2, 127.0.0.3, ... on loopback); the system's choice when nil.
    package static func connect(host: String, port: Int, from source: String? = nil) throws -> Int32 {
        let name = "\(host):\(port)"
        let fd = try makeSocket(name)
        do {
            if let source {
                let rc = try withAddress(host: source, port: 0) { bind(fd, $0, $1) }
                if rc < 0 { throw SocketCallError(call: "bind", address: source, errno: errno) }
            }
            let rc = try withAddress(host: host, port: port) { Glibc.connect(fd, $0, $1) }
            if rc < 0 { throw SocketCallError(call: "connect", address: name, errno: errno) }
            return fd
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// A listening socket on `host:port` (port 0: any free one) and the port it got.
    package static func listen(host: String, port: Int) throws -> (fd: Int32, port: Int) {
        let name = "\(host):\(port)"
        let fd = try makeSocket(name)
        do {
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            let rc = try withAddress(host: host, port: port) { bind(fd, $0, $1) }
            if rc < 0 { throw SocketCallError(call: "bind", address: name, errno: errno) }
            try systemCall("listen", name) { Glibc.listen(fd, 8) }
            var bound = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &bound) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            return (fd, Int(UInt16(bigEndian: bound.sin_port)))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// "host:port" of an IPv4 peer, for logs and errors.
    package static func describe(_ address: sockaddr_in) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(UInt16(bigEndian: address.sin_port))"
    }
}
