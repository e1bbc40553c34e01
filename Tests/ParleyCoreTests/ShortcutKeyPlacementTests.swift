import ParleyCore
import Testing

/// Shortcut files read through ParleyYAML (issue 25, part 4): a key written
/// under another instead of beside it is named as such.
@Suite struct ShortcutKeyPlacementTests {
    func problems(_ yaml: String) -> [String] {
        do throws(ShortcutFileError) {
            _ = try ShortcutLoader.parse(yaml: yaml, file: "lunch.yaml")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func timesWrittenUnderRepeatIsNamedAsSuch() {
        // Before: "a `repeat` action needs `times:`", though `times:` is there.
        #expect(problems("name: X\nactions:\n  - repeat: {times: 2, do: [{speak: hi}]}\n") == [
            "lunch.yaml:3:5: `times:` is written under `repeat:`; it belongs beside `repeat:`, at the same indentation",
        ])
        #expect(problems("name: X\nactions:\n  - repeat:\n      times: 2\n      do:\n        - speak: hi\n") == [
            "lunch.yaml:3:5: `times:` is written under `repeat:`; it belongs beside `repeat:`, at the same indentation",
        ])
        // Written beside it, the same action loads.
        #expect(problems("name: X\nactions:\n  - repeat:\n    times: 2\n    do:\n      - speak: hi\n") == [])
        // Truly missing, the action's own reason.
        #expect(problems("name: X\nactions:\n  - repeat:\n    do: [{speak: hi}]\n")
            == ["lunch.yaml:3:5: a `repeat` action needs `times:` (how many times, 1 to 100)"])
    }

    @Test func otherKeysWrittenOneLevelTooDeep() {
        #expect(problems("name: X\nactions:\n  - ask:\n      as: answer\n")
            .contains("lunch.yaml:3:5: `as:` is written under `ask:`; it belongs beside `ask:`, at the same indentation"))
        #expect(problems("name: X\nactions:\n  - set: {to: 3}\n").contains { $0.contains("`to:` is written under `set:`") })
    }

    @Test func anUnknownKeyOfAnActionSuggestsTheClosestOne() {
        #expect(problems("name: X\nactions:\n  - repeat: 2\n    doo: [{speak: hi}]\n").first
            == "lunch.yaml:4:5: unknown key 'doo' in a `repeat` action; expected one of repeat, times, do; did you mean 'do'?")
    }
}
