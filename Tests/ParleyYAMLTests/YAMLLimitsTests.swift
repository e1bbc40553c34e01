import Foundation
import Testing

@testable import ParleyYAML

/// Anchors, aliases and the size, node and depth caps: each refused at its
/// place with the limit named, before Yams composes anything.
@Suite struct YAMLLimitsTests {
    private func refusal(_ text: String, limits: YAMLLimits = .configuration) -> String {
        do {
            _ = try YAMLDocument.parse(text, file: "f.yaml", limits: limits)
            return "accepted"
        } catch {
            guard case .refused = error.problem else { return "not a refusal: \(error)" }
            return error.description
        }
    }

    @Test func anchorsAndAliasesAreRefusedAtTheirPlace() {
        #expect(refusal("base: &defaults\n  rate: 1\nother: 2\n")
            == "f.yaml:1:7: an anchor (&defaults) is not accepted in a configuration file; write the value out in full")
        // An alias whose anchor is missing is still an alias, named as such.
        #expect(refusal("a: 1\nb: *defaults\n")
            == "f.yaml:2:4: an alias (*defaults) is not accepted in a configuration file; write the value out in full")
        #expect(refusal("- &x one\n- *x\n", limits: .shortcut)
            == "f.yaml:1:3: an anchor (&x) is not accepted in a shortcut file; write the value out in full")
        // The YAML merge key rides on an alias.
        #expect(refusal("a: {b: 1}\nc:\n  <<: *a\n").contains("f.yaml:3:7: an alias (*a)"))
    }

    /// The parser's answer, not a search for `&` and `*`: in text they are text.
    @Test func ampersandsAndAsterisksInTextAreText() throws {
        let text = "name: Tom & Jerry\nsay: \"&not an anchor\"\nmath: 2*3\nstar: '*x'\nlist: [rock & roll, a*b]\n"
        let root = try #require(try YAMLDocument.parse(text, file: "f.yaml", limits: .configuration))
        #expect(try root.mapping().optional("name")?.string() == "Tom & Jerry")
        #expect(try root.mapping().optional("say")?.string() == "&not an anchor")
        #expect(try root.mapping().optional("star")?.string() == "*x")
    }

    /// Nine levels of nine aliases: a billion strings if followed. Refused at
    /// the first anchor, before any is followed; the test would not finish
    /// (or would run out of memory) otherwise.
    @Test func aBillionLaughsIsRefusedAtItsFirstAnchor() {
        var lines = [#"a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]"#]
        let names = Array("abcdefghij").map(String.init)
        for level in 1..<names.count {
            let previous = names[level - 1]
            lines.append("\(names[level]): &\(names[level]) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ", ") + "]")
        }
        let bomb = lines.joined(separator: "\n") + "\n"
        for limits in [YAMLLimits.configuration, .shortcut, .manifest, .board] {
            #expect(refusal(bomb, limits: limits) == "f.yaml:1:4: an anchor (&a) is not accepted in \(limits.kind); write the value out in full")
        }
    }

    @Test func moreNodesThanTheLimitAreRefusedAtTheFirstOnePast() {
        let limits = YAMLLimits(kind: "a test file", maximumBytes: 1 << 20, maximumNodes: 10, maximumDepth: 8)
        // The mapping and 4 pairs are 9 nodes; a fifth key is the 10th, its value the 11th.
        #expect(refusal("a: 1\nb: 2\nc: 3\nd: 4\n", limits: limits) == "accepted")
        #expect(refusal("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n", limits: limits)
            == "f.yaml:5:4: more than 10 values; a test file may have at most that many")
        let many = (0..<20_001).map { "- \($0)" }.joined(separator: "\n")
        #expect(refusal(many).hasPrefix("f.yaml:20000:3: more than 20000 values; a configuration file may have at most that many"))
    }

    /// Yams composes recursively, and the readers recurse through what it
    /// composes: refused at the first list or mapping too deep.
    @Test func nestingPastTheLimitIsRefusedBeforeComposing() {
        #expect(refusal(String(repeating: "[", count: 32) + String(repeating: "]", count: 32)) == "accepted")
        #expect(refusal(String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
            == "f.yaml:1:33: nested more than 32 deep; a configuration file may nest at most that deep")
        #expect(refusal(String(repeating: "[", count: 500), limits: .shortcut)
            == "f.yaml:1:65: nested more than 64 deep; a shortcut file may nest at most that deep")
        // Past libyaml's own nesting limit (1,000) its scanner stops first: an error, not a crash.
        #expect(throws: YAMLError.self) {
            try YAMLDocument.parse(String(repeating: "[", count: 100_000), file: "f.yaml", limits: .shortcut)
        }
        let blocks = (0..<20).map { String(repeating: "  ", count: $0) + "k\($0):" }.joined(separator: "\n") + " x\n"
        #expect(refusal(blocks, limits: .board) == "f.yaml:17:33: nested more than 16 deep; a board file may nest at most that deep")
    }

    @Test func textAndFilesPastTheSizeLimitAreRefused() throws {
        let limits = YAMLLimits(kind: "a test file", maximumBytes: 100, maximumNodes: 100, maximumDepth: 8)
        let fits = "a: " + String(repeating: "x", count: 96) + "\n"
        #expect(refusal(fits, limits: limits) == "accepted")
        #expect(refusal(fits + "#", limits: limits) == "f.yaml:1:1: is 101 bytes; a test file may have at most 100")
        let file = NSTemporaryDirectory() + "parley-yaml-limits-\(getpid()).yaml"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try (fits + "#").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(YAMLDocument.sizeError(file: file, limits: limits)?.description == "\(file):1:1: is 101 bytes; a test file may have at most 100")
        #expect(YAMLDocument.sizeError(file: file, limits: .configuration) == nil)
        #expect(YAMLDocument.sizeError(file: file + ".absent", limits: limits) == nil)
    }

    /// The shipped defaults hold what Parley ships, with room to spare.
    @Test func theShippedConfigurationFitsItsLimits() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("dist/parley.yaml"), encoding: .utf8)
        #expect(try YAMLDocument.parse(text, file: "dist/parley.yaml", limits: .configuration) != nil)
    }
}
