import Foundation
import ParleyControl

/// RAUC's command-line tool, which asks the RAUC service over D-Bus (the
/// image's rauc-service: its D-Bus policy lets any local user call it, so
/// parleyd, user `parley`, needs no privilege of its own).
public struct Rauc: Sendable {
    public static let defaultPath = "/usr/bin/rauc"
    /// The executable; `PARLEY_RAUC` names another (tests give a stand-in).
    public let path: String

    public init(path: String) { self.path = path }

    /// `PARLEY_RAUC` when set, else /usr/bin/rauc.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Rauc {
        Rauc(path: environment["PARLEY_RAUC"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultPath)
    }

    /// Whether there is a rauc to ask (the dev machine, the .deb on a plain Debian: none).
    public var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// The boot loader's slots (A and B), from `rauc status --detailed --output-format=json`.
    public func slots() async throws -> [SlotSummary] {
        let result = try await SystemTool.run(path, ["status", "--detailed", "--output-format=json"], timeout: .seconds(15))
        guard result.succeeded else { throw ToolError(description: "\(path) status failed: \(result.lastLine)") }
        return try RaucStatus.slots(fromJSON: Data(result.output.utf8), source: "\(path) status")
    }

    /// A bundle's version (`rauc info --output-format=json`), its signature
    /// checked against the device's keyring; throws with RAUC's reason.
    public func bundleVersion(_ bundle: String) async throws -> String {
        let result = try await SystemTool.run(path, ["info", "--output-format=json", bundle], timeout: .seconds(120))
        guard result.succeeded else { throw ToolError(description: "\(bundle): \(result.lastLine)") }
        struct Info: Decodable { var version: String? }
        guard let info = try? JSONDecoder().decode(Info.self, from: Data(result.output.utf8)), let version = info.version else {
            throw ToolError(description: "\(bundle): \(path) info printed no JSON object with a \"version\"")
        }
        return version
    }

    /// `rauc install BUNDLE`: RAUC checks the signature and writes the slot
    /// not running, then makes it the next boot. Runs until it is done.
    func install(_ bundle: String) async throws -> ToolRun {
        try await SystemTool.run(path, ["install", bundle])
    }
}

/// Reads RAUC 1.13's `rauc status --output-format=json` (its
/// `r_status_formatter_json`): `booted`, and `slots`, an array of one-member
/// objects, slot name to its fields; `slot_status` only with `--detailed`.
enum RaucStatus {
    struct Document: Decodable {
        var booted: String?
        var slots: [[String: Slot]]
    }

    struct Slot: Decodable {
        var `class`: String?
        var bootname: String?
        var state: String?
        var parent: String?
        var boot_status: String?
        var slot_status: Status?
    }

    struct Status: Decodable {
        var bundle: Bundle?
        var installed: Stamp?
    }

    struct Bundle: Decodable {
        var compatible: String?
        var version: String?
    }

    struct Stamp: Decodable {
        var timestamp: String?
    }

    /// The slots the boot loader chooses between (a boot name, no parent),
    /// in boot-name order; `source` names the output in errors.
    static func slots(fromJSON data: Data, source: String) throws -> [SlotSummary] {
        let document: Document
        do { document = try JSONDecoder().decode(Document.self, from: data) } catch {
            let start = String(decoding: data.prefix(80), as: UTF8.self)
            throw ToolError(description: "\(source) printed no status JSON as RAUC 1.13 writes it "
                + "(an object with \"slots\": [{name: {...}}]): \(error), starting \"\(start)\"")
        }
        let slots = document.slots.flatMap { $0 }.compactMap { name, slot -> SlotSummary? in
            guard let bootname = slot.bootname, slot.parent == nil else { return nil }
            return SlotSummary(
                name: name, bootname: bootname, state: slot.state ?? "unknown", bootStatus: slot.boot_status,
                version: slot.slot_status?.bundle?.version, compatible: slot.slot_status?.bundle?.compatible,
                installed: slot.slot_status?.installed?.timestamp)
        }
        return slots.sorted { ($0.bootname ?? $0.name) < ($1.bootname ?? $1.name) }
    }
}
