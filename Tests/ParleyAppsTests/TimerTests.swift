import Foundation
import ParleyApps
import ParleyCore
import ParleyIntents
import ParleyTestKit
import Testing

/// Timer durations as people say them, and the lines the timer speaks.
@Suite struct TimerTests {
    func harness() throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker")
    }

    @Test(arguments: [
        ("set a timer for ninety seconds", 90),
        ("start a ninety second timer", 90),
        ("set a timer for one minute and thirty seconds", 90),
        ("set a timer for a minute and thirty seconds", 90),
        ("set a timer for one minute thirty seconds", 90),
        ("set a timer for a minute and a half", 90),
        ("start a timer for two minutes and fifteen seconds", 135),
        ("set a timer for ninety minutes", 5400),
        ("set a timer for an hour and a half", 5400),
        ("set a timer for one hour thirty minutes", 5400),
        ("start a ten minute timer", 600),
    ])
    func durationsAreUnderstoodInTheCommand(phrase: String, seconds: Int) async throws {
        let h = try harness()
        await h.say(phrase)
        let performed = try #require(await h.sink.performed.first, "not performed: \(phrase)")
        #expect(performed.intent == "StartTimer")
        #expect(performed.parameters["duration"] == String(seconds), "\(phrase)")
    }

    @Test(arguments: [("ninety seconds", 90), ("one minute and thirty seconds", 90), ("a minute and a half", 90)])
    func durationsAreUnderstoodAsAnAnswer(answer: String, seconds: Int) async throws {
        let h = try harness()
        #expect(await h.say("start a timer") == ["For how long?"])
        await h.say(answer)
        #expect(await h.sink.performed.first?.parameters["duration"] == String(seconds), "\(answer)")
    }

    @Test func theLinesNameTheTimerAsPeopleDo() async throws {
        let h = try harness()
        #expect(await h.say("set a timer for an hour and a half") == ["One hour and thirty minutes, starting now."])
        await h.wait(60)
        #expect(await h.say("how much time is left on the timer")
            == ["One hour and twenty nine minutes left. The one and a half hour timer ends then."])
        #expect(await h.wait(5340) == ["The one and a half hour timer is done."])

        #expect(await h.say("set a timer for ninety seconds") == ["One minute and thirty seconds, starting now."])
        #expect(await h.say("how much time is left on the timer") == ["One minute and thirty seconds left. The ninety second timer ends then."])
        #expect(await h.say("cancel the timer") == ["Timer cancelled. The ninety second timer will not ring."])

        // No adjective reads well for an hour and five minutes: the timer is named by its length.
        await h.say("set a timer for an hour and five minutes")
        #expect(await h.wait(3900) == ["The timer for one hour and five minutes is done."])
    }

    @Test(arguments: [
        (600, "ten minute"), (3600, "one hour"), (45, "forty five second"), (90, "ninety second"),
        (5400, "one and a half hour"), (9000, "two and a half hour"), (150, "two and a half minute"),
        (3900, nil), (135, nil), (4000, nil),
    ] as [(Int, String?)])
    func timerAdjectives(seconds: Int, adjective: String?) {
        #expect(SpokenDuration.adjective(seconds) == adjective)
    }
}
