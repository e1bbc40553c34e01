import Foundation
import Testing

/// The layering Package.swift promises, read off the built executables: the
/// `parley` tool talks to the daemon through ParleyControl and links no
/// daemon code (listening pipeline, room learning, service wiring).
///
/// Swift mangles every symbol with its module's name and length
/// (`$s12ParleyDaemon…`), so a module linked into a binary leaves that
/// prefix in its symbol table; `parleyd`, which must link the daemon, is
/// the check that the prefix is found where it belongs.
@Suite struct LinkedModulesTests {
    /// The executable `name` beside `parley` in the build products folder.
    static func product(_ name: String) throws -> URL {
        let url = try ChatConsoleTests.executable().deletingLastPathComponent().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ChatConsoleTests.CLIError("\(url.path) is missing; build it with `swift build --product \(name)`")
        }
        return url
    }

    /// Whether the binary holds symbols of `module` (its mangled prefix).
    static func links(_ binary: URL, _ module: String) throws -> Bool {
        let data = try Data(contentsOf: binary, options: .alwaysMapped)
        return data.range(of: Data("\(module.utf8.count)\(module)".utf8)) != nil
    }

    @Test func parleyLinksTheControlProtocolAndNoDaemonCode() throws {
        let parley = try ChatConsoleTests.executable()
        #expect(try Self.links(parley, "ParleyControl"), "\(parley.path) holds no ParleyControl symbol")
        #expect(try Self.links(parley, "ParleyConfiguration"), "\(parley.path) holds no ParleyConfiguration symbol")
        #expect(try !Self.links(parley, "ParleyDaemon"), "\(parley.path) links ParleyDaemon code")
    }

    @Test func parleydLinksTheDaemon() throws {
        let parleyd = try Self.product("parleyd")
        #expect(try Self.links(parleyd, "ParleyDaemon"), "\(parleyd.path) holds no ParleyDaemon symbol")
    }
}
