import Foundation

extension ParleyConfig {
    /// `home_assistant`: Parley in a Home Assistant home over the Wyoming
    /// protocol (docs/home-assistant.md). Everything is off by default:
    /// nothing leaves the device unless the owner turns a role on.
    public struct HomeAssistant: Sendable, Equatable {
        /// `home_assistant.satellite`: serve Wyoming as a satellite; commands
        /// Parley rejects are sent to Home Assistant's pipeline.
        public var satellite = false
        /// `home_assistant.port`: the satellite's port (Wyoming's conventional 10700).
        public var port = 10_700
        /// `home_assistant.handler`: offer Parley's engine as a Wyoming
        /// `handle` service to the house's other satellites.
        public var handler = false
        /// `home_assistant.handler_port`: the handle service's port.
        public var handlerPort = 10_800
        /// `home_assistant.listen`: where both listen: `lan` (the default: the
        /// first private IPv4 address of an interface that is up, waited for
        /// at boot), `loopback`, or one IPv4 address (0.0.0.0, every network,
        /// only when written out).
        public var listen = "lan"
        /// `home_assistant.allow`: the IPv4 addresses of the Home Assistant(s)
        /// the satellite and the handler serve. Empty (the default): the first
        /// address that speaks Wyoming to either is kept and only it is served
        /// (`<state>/home-assistant/peer`; delete it to pair another).
        public var allow: [String] = []
        /// `home_assistant.name`: how Home Assistant names the device.
        public var name = "Parley"
        /// `home_assistant.area`: the area suggested to Home Assistant.
        public var area: String?

        public init() {}
    }
}

extension ConfigLoader {
    static func readHomeAssistant(_ section: Field, into homeAssistant: inout ParleyConfig.HomeAssistant) throws {
        try section.forEachEntry(of: ["satellite", "port", "handler", "handler_port", "listen", "allow", "name", "area"]) { key, field in
            switch key {
            case "satellite": homeAssistant.satellite = try field.bool()
            case "port": homeAssistant.port = try field.int(in: 1...65_535)
            case "handler": homeAssistant.handler = try field.bool()
            case "handler_port": homeAssistant.handlerPort = try field.int(in: 1...65_535)
            case "listen":
                let text = try field.string()
                guard text == "lan" || text == "loopback" || isIPv4(text) else {
                    throw field.impossible("\"\(text)\" is not lan, loopback or an IPv4 address such as 192.168.1.20")
                }
                homeAssistant.listen = text
            case "allow":
                // One address or a list of them.
                let items = (try? field.sequence()) ?? [field]
                homeAssistant.allow = try items.map { item in
                    let text = try item.string()
                    guard isIPv4(text), text != "0.0.0.0" else {
                        throw field.impossible("\"\(text)\" is not the IPv4 address of a Home Assistant, such as 192.168.1.10")
                    }
                    return text
                }
            case "name": homeAssistant.name = try field.string()
            case "area": homeAssistant.area = try field.optionalString()
            default: throw field.unknownKey()
            }
        }
        if homeAssistant.satellite, homeAssistant.handler, homeAssistant.port == homeAssistant.handlerPort {
            throw section.impossible("port and handler_port are both \(homeAssistant.port); the satellite and the handler need a port each")
        }
    }
}
