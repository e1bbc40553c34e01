import Testing
@testable import ParleyConfiguration

/// `voice.alarm_floor` (issue 28): the lowest level a timer alarm plays at.
@Suite struct AlarmFloorTests {
    @Test func theFloorIsReadAndDefaultsToFour() throws {
        #expect(try ConfigLoader.parse("board: sim\n", file: "/etc/parley/parley.yaml").voice.alarmFloor == 4)
        let config = try ConfigLoader.parse("board: sim\nvoice:\n  alarm_floor: 7\n", file: "/etc/parley/parley.yaml")
        #expect(config.voice.alarmFloor == 7)
    }

    @Test func aSilentFloorIsRefusedAtItsLine() {
        do {
            _ = try ConfigLoader.parse("board: sim\nvoice:\n  alarm_floor: 0\n", file: "/etc/parley/parley.yaml")
            Issue.record("a floor of 0 was accepted: an alarm could be silent")
        } catch {
            let error = error as? ConfigError
            #expect(error?.key == "voice.alarm_floor" && error?.line == 3, "\(String(describing: error))")
            #expect("\(String(describing: error))".contains("1"), "the allowed range is named")
        }
    }
}
