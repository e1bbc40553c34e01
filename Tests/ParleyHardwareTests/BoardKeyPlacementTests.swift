import Foundation
import Testing

@testable import ParleyHardware

/// Board files read through ParleyYAML (issue 25, part 4).
@Suite struct BoardKeyPlacementTests {
    @Test func aKeyIndentedUnderItsNeighbourIsNamedAsSuch() throws {
        let yaml = validBoard.replacingOccurrences(of: "  line: 27\n  active: low\n  bias: pull-up", with: "  line: 27\n  bias:\n    active: low")
        let error = try #require(parseError(yaml))
        #expect(error.problem == .misplacedKey("active", under: "bias"))
        #expect(error.key == "mute-switch.active")
        #expect(error.line == 14)
        #expect(error.description.contains("`active:` is written under `bias:`; it belongs beside `bias:`"))
    }

    @Test func aMisspeltKeyGetsTheClosestAllowedOne() throws {
        let yaml = validBoard.replacingOccurrences(of: "  long-press-ms: 800", with: "  longpress-ms: 800")
        let error = try #require(parseError(yaml))
        #expect(error.key == "button.longpress-ms")
        #expect(error.description.hasSuffix("did you mean 'long-press-ms'?"))
    }
}
