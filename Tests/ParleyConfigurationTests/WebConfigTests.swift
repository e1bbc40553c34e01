import Testing

@testable import ParleyConfiguration

/// parley.yaml's `web:` section: off by default, and every wrong value named
/// with its file, line and key.
@Suite struct WebConfigTests {
    @Test func thePageIsOffByDefaultAndReadWhenSet() throws {
        #expect(ParleyConfig().web == ParleyConfig.Web())
        #expect(!ParleyConfig().web.enabled)
        let config = try ConfigLoader.parse("web:\n  enabled: true\n  port: 80\n  listen: 192.168.1.20\n", file: "p.yaml")
        #expect(config.web.enabled && config.web.port == 80 && config.web.listen == "192.168.1.20")
        #expect(config.web.pairing == "spoken")
        #expect(try ConfigLoader.parse("web: {pairing: button}\n", file: "p.yaml").web.pairing == "button")
    }

    @Test func wrongValuesAreNamedWithTheirLine() {
        let cases: [(String, Int, String, String)] = [
            ("web:\n  port: 70000\n", 2, "web.port", "70000 is not in 0…65535"),
            ("web:\n  listen: 0.0.0.0\n", 2, "web.listen", "0.0.0.0 would listen on every network; use lan"),
            ("web:\n  listen: everywhere\n", 2, "web.listen", "\"everywhere\" is not lan, loopback or an IPv4 address such as 192.168.1.20"),
            ("web:\n  listen: 300.1.1.1\n", 2, "web.listen", "\"300.1.1.1\" is not lan, loopback or an IPv4 address such as 192.168.1.20"),
            ("web:\n  enabled: sometimes\n", 2, "web.enabled", "expected true or false, found 'sometimes'"),
            ("web:\n  password: x\n", 2, "web.password", "not a Parley setting (see dist/parley.yaml)"),
            ("web:\n  pairing: shouted\n", 2, "web.pairing", "\"shouted\" is not one of spoken, button"),
        ]
        Self.expectRefused(cases)
    }

    /// Each (YAML, line, key, reason): refused, naming that line, key and reason.
    static func expectRefused(_ cases: [(String, Int, String, String)]) {
        for (yaml, line, key, reason) in cases {
            let error = #expect(throws: ConfigError.self) { try ConfigLoader.parse(yaml, file: "p.yaml") }
            #expect(error?.line == line, "\(yaml)")
            #expect(error?.key == key, "\(yaml)")
            #expect(error?.reason == reason, "\(yaml)")
        }
    }
}
