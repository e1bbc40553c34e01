import Foundation
import ParleyTestKit
import Testing

/// docs/architecture.svg (scripts/architecture-svg.py draws it) against
/// Package.swift: one box per module (test targets and the test-only C
/// helpers under Tests/ left out) and one arrow per dependency inside the
/// package, nothing missing and nothing extra, so the picture cannot drift.
@Suite struct ArchitecturePictureTests {
    struct Picture: Equatable {
        var modules: Set<String> = []
        /// "From -> To": From uses To.
        var dependencies: Set<String> = []
    }

    /// What Package.swift declares, as `swift package dump-package` reads it.
    static func declared() async throws -> Picture {
        // Its own scratch folder: the test runner's `swift test` holds the
        // package's .build while the tests run.
        let scratch = try TemporaryDirectory(); defer { scratch.remove() }
        let exit = try await ChildProcess.run(
            "/usr/bin/env", ["swift", "package", "--scratch-path", scratch.path, "dump-package"],
            workingDirectory: Fixtures.packageRoot.path)
        try #require(exit.succeeded, "swift package dump-package: \(exit.standardError)")
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(exit.standardOutput.utf8)) as? [String: Any])
        let targets = try #require(dump["targets"] as? [[String: Any]]).filter {
            $0["type"] as? String != "test" && !(($0["path"] as? String)?.hasPrefix("Tests/") ?? false)
        }
        var picture = Picture()
        picture.modules = Set(targets.compactMap { $0["name"] as? String })
        for target in targets {
            let name = target["name"] as? String ?? ""
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // {"byName": ["ParleyCore", null]} or {"target": [...]}; products are outside the package.
                guard let used = (dependency["byName"] ?? dependency["target"]) as? [Any], let to = used.first as? String,
                      picture.modules.contains(to) else { continue }
                picture.dependencies.insert("\(name) -> \(to)")
            }
        }
        return picture
    }

    /// The boxes (`<g class="module" data-name=…>`) and arrows (`<g
    /// class="dependency" data-from=… data-to=…>`) of an SVG.
    static func drawn(_ svg: String) throws -> Picture {
        func attribute(_ name: String, in tag: Substring) -> String? {
            guard let start = tag.range(of: " \(name)=\"") else { return nil }
            return String(tag[start.upperBound...].prefix { $0 != "\"" })
        }
        var picture = Picture()
        for tag in svg.split(separator: "<").filter({ $0.hasPrefix("g ") }) {
            switch attribute("class", in: tag) {
            case "module": picture.modules.insert(try #require(attribute("data-name", in: tag), "\(tag)"))
            case "dependency":
                let from = try #require(attribute("data-from", in: tag), "\(tag)")
                picture.dependencies.insert("\(from) -> \(try #require(attribute("data-to", in: tag), "\(tag)"))")
            default: break
            }
        }
        return picture
    }

    /// What differs, in words: empty when the picture is Package.swift's.
    static func differences(declared: Picture, drawn: Picture) -> [String] {
        func listed(_ set: Set<String>) -> String { set.sorted().joined(separator: ", ") }
        var found: [String] = []
        let pairs = [("module", declared.modules, drawn.modules), ("arrow", declared.dependencies, drawn.dependencies)]
        for (what, declared, drawn) in pairs {
            let missing = declared.subtracting(drawn), extra = drawn.subtracting(declared)
            if !missing.isEmpty { found.append("\(what)s in Package.swift but not in the picture: \(listed(missing))") }
            if !extra.isEmpty { found.append("\(what)s in the picture but not in Package.swift: \(listed(extra))") }
        }
        return found
    }

    @Test func thePictureShowsEveryModuleAndDependencyOfPackageSwift() async throws {
        let svg = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/architecture.svg"), encoding: .utf8)
        let declared = try await Self.declared()
        #expect(declared.modules.contains("ParleyCore") && declared.dependencies.contains("ParleyCore -> ParleyIntents"))
        let differences = Self.differences(declared: declared, drawn: try Self.drawn(svg))
        #expect(differences.isEmpty, """
            docs/architecture.svg is out of date with Package.swift (run python3 scripts/architecture-svg.py):
            \(differences.joined(separator: "\n"))
            """)
    }

    @Test func aMissingOrExtraBoxOrArrowIsNamed() throws {
        let svg = """
            <svg><g class="module" data-name="A"><rect/></g><g class="module" data-name="C"></g>
            <g class="dependency" data-from="A" data-to="C"><path/></g></svg>
            """
        let declared = Picture(modules: ["A", "B"], dependencies: ["A -> B"])
        #expect(Self.differences(declared: declared, drawn: try Self.drawn(svg)) == [
            "modules in Package.swift but not in the picture: B", "modules in the picture but not in Package.swift: C",
            "arrows in Package.swift but not in the picture: A -> B", "arrows in the picture but not in Package.swift: A -> C",
        ])
    }
}
