import Testing
@testable import ParleyYAML

@Suite struct YAMLReaderTests {
    func root(_ text: String) throws -> YAMLNode { try #require(try YAMLDocument.parse(text, file: "f.yaml", limits: .configuration)) }

    @Test func nodesCarryFileLineColumnAndTheirKeyPath() throws {
        let button = try root("name: x\nbutton:\n  debounce-ms: 20\n").mapping().required("button").mapping()
        let value = try button.required("debounce-ms")
        #expect(value.location == YAMLLocation(file: "f.yaml", line: 3, column: 16))
        #expect(value.path == "button.debounce-ms")
        #expect(try value.int(in: 0...1000) == 20)
        let items = try root("days: [mon, tue]\n").mapping().required("days").list()
        #expect(items.map(\.path) == ["days[0]", "days[1]"])
        #expect(items[1].location.column == 13)
    }

    @Test func typedReadsSayWhatWasExpectedAndWhatWasFound() throws {
        let map = try root("n: lots\nr: 2000\nb: sometimes\nl: [a]\ne: strobe\nd: 1e400\n").mapping()
        #expect(throws: YAMLError(.wrongType(expected: "a whole number", found: "'lots'"),
                                  at: YAMLLocation(file: "f.yaml", line: 1, column: 4), path: "n")) {
            try map.required("n").int(in: 0...10)
        }
        let range = #expect(throws: YAMLError.self) { try map.required("r").int(in: 0...1000) }
        #expect(range?.description == "f.yaml:2:4: invalid value '2000'; expected a number from 0 to 1000")
        let bool = #expect(throws: YAMLError.self) { try map.required("b").bool() }
        #expect(bool?.description == "f.yaml:3:4: expected true or false, found 'sometimes'")
        let text = #expect(throws: YAMLError.self) { try map.required("l").string() }
        #expect(text?.description == "f.yaml:4:4: expected a text value, found a list")
        enum Pattern: String, CaseIterable { case on, off, blink }
        let pattern = #expect(throws: YAMLError.self) { try map.required("e").oneOf(Pattern.self) }
        #expect(pattern?.description == "f.yaml:5:4: invalid value 'strobe'; expected one of on, off, blink")
        #expect(throws: YAMLError.self) { try map.required("d").double(in: 0...1) }
        #expect(try root("x: yes\n").mapping().required("x").bool() == true)
    }

    @Test func anUnknownKeyNamesTheClosestAllowedOne() throws {
        let error = #expect(throws: YAMLError.self) {
            try root("button:\n  debounce_ms: 20\n").mapping().required("button").mapping(allowed: ["line", "debounce-ms"])
        }
        #expect(error?.description == "f.yaml:2:3: unknown key 'debounce_ms'; expected one of line, debounce-ms; did you mean 'debounce-ms'?")
        #expect(error?.path == "button.debounce_ms")
        let far = #expect(throws: YAMLError.self) { try root("colour: red\n").mapping(allowed: ["name", "actions"]) }
        #expect(far?.problem == .unknownKey("colour", in: nil, allowed: ["name", "actions"], suggestion: nil))
    }

    @Test func aKeyWrittenUnderAnotherIsNamedAsSuch() throws {
        let step = try root("- repeat: {times: 2, do: [{speak: hi}]}\n").list()[0].mapping()
        let error = #expect(throws: YAMLError.self) { try step.required("times") }
        #expect(error?.problem == .missingKey("times", writtenUnder: "repeat"))
        #expect(error?.description == "f.yaml:1:3: `times:` is written under `repeat:`; it belongs beside `repeat:`, at the same indentation")
        let missing = #expect(throws: YAMLError.self) { try step.required("as") }
        #expect(missing?.description == "f.yaml:1:3: missing required key 'as'")
    }

    @Test func syntaxErrorsAndEmptyDocuments() throws {
        #expect(try YAMLDocument.parse("", file: "f.yaml", limits: .configuration) == nil)
        let error = #expect(throws: YAMLError.self) { try YAMLDocument.parse("a: [\n", file: "f.yaml", limits: .configuration) }
        #expect(error?.location.line == 2)
        #expect(error?.message.hasPrefix("not valid YAML: ") == true)
        let duplicate = #expect(throws: YAMLError.self) { try YAMLDocument.parse("a: 1\na: 2\n", file: "f.yaml", limits: .configuration) }
        #expect(duplicate?.message.contains("duplicate key a") == true)
    }

    @Test func problemsAreCollectedPastTheFirst() throws {
        let map = try root("a: x\nb: y\n").mapping()
        var problems = YAMLProblems()
        let a = problems.attempt { () throws(YAMLError) in try map.required("a").int(in: 0...1) }
        let b = problems.attempt { () throws(YAMLError) in try map.required("b").string() }
        #expect(a == nil && b == "y")
        #expect(problems.errors.map(\.location.line) == [1])
    }
}
