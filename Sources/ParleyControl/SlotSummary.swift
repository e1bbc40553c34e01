import Foundation

/// One root file system slot of an A/B device as RAUC reports it
/// (`rauc status --detailed`), for `parley status`'s `slots:` line.
public struct SlotSummary: Sendable, Codable, Equatable {
    /// RAUC's slot name ("rootfs.0").
    public var name: String
    /// The boot loader's name for it ("A"), nil for a slot the boot loader does not choose.
    public var bootname: String?
    /// RAUC's slot state: "booted", "active" (mounted, not booted) or "inactive".
    public var state: String
    /// "good" or "bad" as the boot loader sees it (GRUB: OK and not being tried); nil without a boot name.
    public var bootStatus: String?
    /// The bundle installed into it (its manifest's version and compatible); nil when RAUC has no record.
    public var version: String?
    public var compatible: String?
    /// When RAUC installed it (RAUC's own timestamp text, "2026-12-05T10:12:41Z").
    public var installed: String?

    public init(name: String, bootname: String? = nil, state: String, bootStatus: String? = nil,
                version: String? = nil, compatible: String? = nil, installed: String? = nil) {
        self.name = name
        self.bootname = bootname
        self.state = state
        self.bootStatus = bootStatus
        self.version = version
        self.compatible = compatible
        self.installed = installed
    }

    public var booted: Bool { state == "booted" }

    /// "A 0.1.0 (booted, good)", "B (bad)": the slot's boot name (or RAUC
    /// name), its bundle's version when RAUC recorded one, then how it boots.
    public var summary: String {
        let notes = [booted ? "booted" : nil, bootStatus].compactMap { $0 }
        return [bootname ?? name, version, notes.isEmpty ? nil : "(\(notes.joined(separator: ", ")))"]
            .compactMap { $0 }.joined(separator: " ")
    }

    /// `parley status`'s line: "A 0.1.0 (booted, good), B 0.1.1 (good)".
    public static func line(_ slots: [SlotSummary]) -> String {
        slots.map(\.summary).joined(separator: ", ")
    }
}
