import Foundation
import ParleyStore
import Testing

@testable import ParleyConfiguration

/// The `donations:` keys, and durations too large to convert (a crash before).
@Suite struct ConfigLimitsTests {
    private func parse(_ yaml: String) throws -> ParleyConfig {
        try ConfigLoader.parse(yaml, file: "/etc/parley/parley.yaml")
    }

    private func refusal(_ yaml: String) -> String {
        do { _ = try parse(yaml); return "accepted" } catch { return "\(error)" }
    }

    @Test func donationRetentionIsReadAndBounded() throws {
        #expect(try parse("").donationRetention == DonationRetention(maximumAge: .seconds(90 * 86_400), maximumCount: 10_000))
        let config = try parse("donations:\n  keep: 30d\n  max_entries: 500\n")
        #expect(config.donationRetention == DonationRetention(maximumAge: .seconds(30 * 86_400), maximumCount: 500))
        #expect(try parse("donations:\n  keep: 1d\n").donationRetention.maximumAge == .seconds(86_400))
        #expect(try parse("donations:\n  keep: 36h\n").donationRetention.maximumAge == .seconds(36 * 3600))
        #expect(refusal("donations:\n  keep: 12h\n").contains("12h is not between 1d and 3650d"))
        #expect(refusal("donations:\n  max_entries: 99\n").contains("99 is not in 100…1000000"))
        #expect(refusal("donations:\n  forever: true\n").contains("donations.forever"))
    }

    /// Found while writing the config fuzz target: `Int64(1e300 * 1000)` trapped.
    @Test func aHugeDurationIsRefusedNotACrash() {
        for value in ["1e300", "1e300s", "-1e300ms", "9223372036854775807min", "1e18d"] {
            let text = refusal("timeouts:\n  answer: \(value)\n")
            #expect(text.contains("is not between 1s and 120s"), "\(value): \(text)")
        }
    }

    /// YAML's anchors and aliases are refused where they are written; a
    /// file past the size limit is refused before it is read.
    @Test func anchorsAliasesAndOversizedFilesAreRefused() throws {
        #expect(refusal("voice: &v\n  rate: 170\nwake: *v\n")
            == "/etc/parley/parley.yaml:1:8: refused: an anchor (&v) is not accepted in a configuration file; write the value out in full")
        #expect(refusal("tips: true\nvoice: *v\n")
            == "/etc/parley/parley.yaml:2:8: refused: an alias (*v) is not accepted in a configuration file; write the value out in full")
        let file = NSTemporaryDirectory() + "parley-config-big-\(getpid()).yaml"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try ("tips: true\n" + String(repeating: "#\n", count: 128 * 1024)).write(toFile: file, atomically: true, encoding: .utf8)
        let error = #expect(throws: ConfigError.self) { try ConfigLoader.load(contentsOf: file) }
        #expect(error?.description == "\(file):1:1: refused: is 262155 bytes; a configuration file may have at most 262144")
    }
}
