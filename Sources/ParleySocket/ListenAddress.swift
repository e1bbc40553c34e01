#if canImport(Glibc)
    import Glibc
#endif

/// Where the page (`web.listen`) and Wyoming (`home_assistant.listen`) listen. `lan` is the
/// first private IPv4 address (10/8, 172.16/12, 192.168/16) of an interface
/// that is up; a speaker that boots before its network has none yet, and
/// the service waits for one.
public enum ListenAddress {
    public static func resolve(_ setting: String) -> String? {
        switch setting {
        case "loopback": return "127.0.0.1"
        case "lan": return privateAddresses().first
        default: return setting
        }
    }

    public static func isPrivate(_ address: String) -> Bool {
        let parts = address.split(separator: ".").compactMap { UInt8($0) }
        guard parts.count == 4 else { return false }
        return parts[0] == 10 || (parts[0] == 172 && (16...31).contains(parts[1])) || (parts[0] == 192 && parts[1] == 168)
    }

    /// The private IPv4 addresses of the interfaces that are up, in the kernel's order.
    public static func privateAddresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
                let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET)
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin -> Bool in
                var addr = sin.pointee.sin_addr
                return inet_ntop(AF_INET, &addr, &text, socklen_t(INET_ADDRSTRLEN)) != nil
            }
            let value = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if ok, isPrivate(value) { found.append(value) }
        }
        return found
    }
}
