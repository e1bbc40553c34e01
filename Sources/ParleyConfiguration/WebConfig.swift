import Foundation

extension ParleyConfig {
    /// `web`: the speaker's page (ParleyWeb), served by parleyd itself. Off by
    /// default: a development machine opens no network port unless asked;
    /// the device image turns it on.
    public struct Web: Sendable, Equatable {
        /// `web.enabled`
        public var enabled = false
        /// `web.port`: the TCP port (the image uses 80, with the capability to
        /// bind it); 0 lets the system choose a free one, logged as "web page
        /// listening url=…" (tests).
        public var port = 8080
        /// `web.listen`: `lan` (the first private IPv4 address of an interface
        /// that is up, waited for while there is none), `loopback` (this machine
        /// only: tests, an SSH tunnel) or one literal IPv4 address. Never every
        /// address: the page is for the local network only.
        public var listen = "lan"
        /// `web.pairing`: how a browser gets its pairing code. `spoken`: the
        /// page asks and the speaker says a code (at most once a minute);
        /// `button`: the page's request only arms pairing for a minute, and
        /// the code is said when the device's button is pressed (someone in
        /// the room), so nobody on the network can make the speaker talk.
        public var pairing = "spoken"
        public init() {}
    }
}

extension ConfigLoader {
    /// The `web:` section, read in a file of its own so it stays beside the page's code.
    static func readWeb(_ section: Field, into web: inout ParleyConfig.Web) throws {
        try section.forEachEntry(of: ["enabled", "port", "listen", "pairing"]) { key, field in
            switch key {
            case "enabled": web.enabled = try field.bool()
            case "port": web.port = try field.int(in: 0...65_535)
            case "listen":
                let value = try field.string()
                guard value == "lan" || value == "loopback" || Self.isIPv4(value) else {
                    throw field.impossible("\"\(value)\" is not lan, loopback or an IPv4 address such as 192.168.1.20")
                }
                if value == "0.0.0.0" { throw field.impossible("0.0.0.0 would listen on every network; use lan") }
                web.listen = value
            case "pairing": web.pairing = try field.oneOf(["spoken", "button"])
            default: throw field.unknownKey()
            }
        }
    }

    public static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && UInt8(part) != nil
        }
    }
}
