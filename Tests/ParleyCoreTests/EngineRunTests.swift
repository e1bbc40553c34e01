import Foundation
import ParleyApps
import ParleyTestKit
import Synchronization
import Testing

@testable import ParleyCore

/// Runs have identifiers, can be stopped while they perform, and leave
/// nothing running behind them.
@Suite(.serialized) struct EngineRunTests {
    func harness(_ configuration: EngineConfiguration = EngineConfiguration()) throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all + [ChiliApp()], primaryApp: "Coffee Maker", configuration: configuration)
    }

    @Test func cancelSpokenWhileASlowIntentPerformsStopsItAndSaysSo() async throws {
        let h = try harness()
        let stopsBefore = simmerStops.load(ordering: .relaxed)
        let running = Task { await h.engine.hear("simmer chili with chili shack") }
        await h.clock.waitForSleepers(1)  // the time limit is running: perform is under way
        #expect(await h.engine.isConversationOpen)
        await h.engine.hear("cancel")  // the actor is reentrant: heard while perform awaits
        await running.value
        #expect(await h.sink.spoken == ["Cancelled."])
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.donations.rows.isEmpty)
        // The app's own task was cancelled, not left simmering.
        try await Poll.until("the app's simmering task stopped", polls: 120_000, every: .milliseconds(1)) {
            simmerStops.load(ordering: .relaxed) != stopsBefore
        }
        #expect(simmerStops.load(ordering: .relaxed) == stopsBefore + 1)
        #expect(h.clock.sleeperCount == 0)
        #expect(await h.say("serve chili with chili shack") == ["Which chili? Beef or veggie?"])
    }

    @Test func aLongPressWhileASlowIntentPerformsStopsIt() async throws {
        let h = try harness()
        let running = Task { await h.engine.hear("slow chili with chili shack") }
        await h.clock.waitForSleepers(1)
        await h.engine.button(.longPress)
        await running.value
        #expect(await h.sink.spoken == ["Cancelled."])
        #expect(await h.sink.performed.isEmpty)
        #expect(h.clock.sleeperCount == 0)
        #expect(await h.engine.isConversationOpen == false)
    }

    /// A cancel that reaches the engine while a confirmed run is on its way
    /// to the app (suspended setting the LED) stops it there: the app is
    /// never asked, where before the cancel said "Cancelled." and the order
    /// went through all the same.
    @Test func aCancelBeforeThePerformStartsMeansTheAppIsNeverAsked() async throws {
        let h = try EngineHarness(apps: [Pantry()], primaryApp: "Pantry")
        let before = flourOrders.load(ordering: .relaxed)
        #expect(await h.say("order flour with pantry").last?.contains("Press the button") == true)
        let gate = await h.sink.hold(.led(.thinking))
        let press = Task { await h.engine.button(.press) }
        await gate.waitForArrivals(1)  // the run is performing, its LED not yet set
        await h.engine.button(.longPress)
        gate.openFirst()
        await press.value
        #expect(await h.sink.spoken.last == "Cancelled.")
        #expect(flourOrders.load(ordering: .relaxed) == before, "the app was asked to order")
        #expect(await h.sink.performed.isEmpty)
        #expect(await h.donations.rows.isEmpty)
        #expect(await h.engine.isConversationOpen == false)
        #expect(h.clock.sleeperCount == 0)
    }

    @Test func aResultArrivingAfterItsRunWasCancelledIsNeitherSpokenNorDonated() async throws {
        let h = try harness()
        let arrived = lateGate.waiting
        let first = Task { await h.engine.hear("late chili with chili shack") }
        await lateGate.waitForArrivals(arrived + 1)
        await h.engine.hear("cancel")
        await first.value
        // A new run of the same intent is performing when the first one's result arrives.
        let second = Task { await h.engine.hear("late chili with chili shack") }
        await lateGate.waitForArrivals(arrived + 2)
        let finished = lateFinished.load(ordering: .relaxed)
        lateGate.openFirst()  // the cancelled run's perform goes on now: it donates, then returns
        try await Poll.until("the cancelled run's perform finished", polls: 120_000, every: .milliseconds(1)) {
            lateFinished.load(ordering: .relaxed) != finished
        }
        lateGate.openFirst()  // then the current one's
        await second.value
        #expect(await h.sink.spoken == ["Cancelled.", "Done late."])
        #expect(await h.sink.performed.count == 1)
        // The current run's own donation and its automatic one; nothing of the cancelled run.
        #expect(await h.donations.rows.map(\.identifier) == ["late", nil])
    }

    @Test func theTimeLimitLeavesNoSleeperBehindAFastPerform() async throws {
        let h = try harness()
        for _ in 0..<20 { await h.say("taste chili with chili shack") }
        #expect(await h.sink.spoken == ["Tasty."])
        #expect(h.clock.sleeperCount == 0)
    }

    @Test func aRunStartedByNameCarriesItsTriggerAndAsksForWhatIsMissing() async throws {
        let h = try harness()
        let id = await h.engine.start(RunRequest(app: "Timer", intent: "StartTimer", values: ["duration": "600"], trigger: .shortcut))
        #expect(id != nil)
        #expect(await h.sink.spoken == ["Ten minutes, starting now."])
        #expect(await h.sink.performed.first?.trigger == "shortcut")
        #expect(await h.donations.rows.map(\.trigger) == ["shortcut"])

        _ = await h.sink.drain()
        await h.engine.start(RunRequest(app: "Timer", intent: "StartTimer", trigger: .automation))
        #expect(await h.sink.spoken == ["For how long?"])
        #expect(await h.say("five minutes") == ["Five minutes, starting now."])
        #expect(await h.donations.rows.map(\.trigger) == ["shortcut", "automation"])
        #expect(await h.engine.start(RunRequest(app: "Timer", intent: "Nothing", trigger: .shortcut)) == nil)
        // Not while a conversation is open: it would take the person's question away.
        await h.say("start a timer")
        #expect(await h.engine.start(RunRequest(app: "Timer", intent: "TimeLeft", trigger: .automation)) == nil)
        #expect(await h.say("ten minutes") == ["Ten minutes, starting now."])
    }

    @Test func aDoublePressRepeatsOrListsWithoutGoingThroughTheResolver() async throws {
        var configuration = EngineConfiguration()
        configuration.doublePress = .repeatLast
        let h = try harness(configuration)
        await h.say("start a ten minute timer")
        #expect(await h.press(.doublePress) == ["Ten minutes, starting now."])
        #expect(await h.donations.rows.count == 1)  // said again, not run again
        configuration.doublePress = .listShortcuts
        await h.engine.setConfiguration(configuration)
        #expect(await h.press(.doublePress).first?.hasPrefix("You can say: ") == true)
    }
}

/// Deadlines run on the monotonic clock: the wall clock jumping by years
/// (NTP on a board without a real-time clock) fires nothing early and holds
/// nothing back.
@Suite struct WallClockJumpTests {
    static let years: TimeInterval = 3 * 365 * 86400

    func harness() throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all + [ChiliApp()], primaryApp: "Coffee Maker")
    }

    @Test func aQuestionWaitsItsFullTimeWhateverTheWallClockDoes() async throws {
        let h = try harness()
        #expect(await h.say("order soup with soup chef") == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.jumpWallClock(by: Self.years).isEmpty)
        #expect(await h.sink.events.contains { if case .log(let line) = $0 { line.hasPrefix("wall clock moved by") } else { false } })
        #expect(await h.wait(7.9).isEmpty)
        #expect(await h.jumpWallClock(by: -2 * Self.years).isEmpty)
        #expect(await h.wait(0.1) == ["Which soup? Clam chowder, tomato or chicken noodle?"])
        #expect(await h.say("tomato") == ["How many soups do you want?"])
    }

    @Test func aConfirmationWaitsItsFullTimeWhateverTheWallClockDoes() async throws {
        let h = try harness()
        await h.say("order soup with soup chef")
        await h.say("tomato")
        await h.say("one")
        let confirmation = await h.say("lewis")
        #expect(confirmation.first?.contains("Press the button to order") == true)
        #expect(await h.jumpWallClock(by: -Self.years).isEmpty)
        #expect(await h.wait(19).isEmpty)
        #expect(await h.jumpWallClock(by: 2 * Self.years).isEmpty)
        #expect(await h.wait(1) == confirmation)
        #expect(await h.wait(20) == ["No answer heard, so nothing was done."])
        #expect(await h.donations.rows.isEmpty)
    }

    @Test func aRunningTimerRingsOnTimeWhateverTheWallClockDoes() async throws {
        let h = try harness()
        #expect(await h.say("start a ten minute timer") == ["Ten minutes, starting now."])
        #expect(await h.jumpWallClock(by: Self.years).isEmpty)  // not years overdue
        #expect(await h.sink.sounds.isEmpty)
        #expect(await h.say("how much time is left on the timer") == ["Ten minutes left. The ten minute timer ends then."])
        #expect(await h.wait(300).isEmpty)
        #expect(await h.jumpWallClock(by: -2 * Self.years).isEmpty)  // not years away
        #expect(await h.say("how much time is left on the timer") == ["Five minutes left. The ten minute timer ends then."])
        #expect(await h.wait(299).isEmpty)
        #expect(await h.wait(1) == ["The ten minute timer is done."])
        #expect(await h.sink.sounds == ["chime"])
    }
}

/// Resolution steps, without a clock, an actor or output.
@Suite struct RunMachineTests {
    func run(_ intent: String) throws -> Run {
        let registry = try AppRegistry(apps: [ChiliApp()])
        let descriptor = try #require(registry.descriptor(app: "Chili", intent: intent))
        return Run(id: RunID(value: 1), app: AppDescription(ChiliApp()), descriptor: descriptor, values: [:], trigger: .voice)
    }

    @Test func anUnsupportedValueIsExplainedAndAskedForAgain() throws {
        var pour = try run("PourChili")
        pour.index = 2  // bowls
        pour.values["bowls"] = "5"
        pour.settled.insert("bowls")
        guard case .ask(let next, let definition, let prompt, let options, let preface) =
                RunMachine.step(pour, resolution: .unsupported(reason: "Only two bowls are clean.")) else {
            Issue.record("expected a question"); return
        }
        #expect(definition.name == "bowls" && prompt == nil && options == nil)
        #expect(preface == "Only two bowls are clean.")
        #expect(next.values["bowls"] == nil && !next.settled.contains("bowls"))
    }

    @Test func aResolvedValueMovesToTheNextParameterAndTheLastOneToPerform() throws {
        var serve = try run("ServeChili")
        guard case .resolveNext(let next) = RunMachine.step(serve, resolution: .success("beef")) else {
            Issue.record("expected the next parameter"); return
        }
        #expect(next.index == 1 && next.values["pot"] == "beef")
        serve.index = 1
        guard case .perform = RunMachine.finished(serve) else { Issue.record("a generic intent performs at once"); return }
    }

    @Test func answersToAListPickByNameOrOrdinalAndCancelOrRepeat() throws {
        let serve = try run("ServeChili")
        let definition = serve.descriptor.parameters[0]
        let question = Waiting.Question(run: serve, subject: .disambiguation(definition), question: FollowUpQuestion(
            prompt: "Which chili?", expectation: .options(ChiliPot.all.map(\.option), listed: ChiliPot.all.map(\.option))))
        let resolver = Resolver(model: FollowUpGrammar.model(for: question.question))
        func step(_ text: String) -> RunMachine.Step { RunMachine.step(question, answer: resolver.resolve(text), text: text) }
        guard case .resolveNext(let byOrdinal) = step("the second one") else { Issue.record("ordinal"); return }
        #expect(byOrdinal.values["pot"] == "veggie" && byOrdinal.settled.contains("pot"))
        guard case .cancel = step("never mind") else { Issue.record("cancel"); return }
        guard case .repeatLine = step("say that again") else { Issue.record("repeat"); return }
        guard case .notUnderstood = step("purple elephants") else { Issue.record("not understood"); return }
    }

    @Test func aSpokenYesConfirmsOnlyWhereVoiceIsAllowed() {
        let model = FollowUpGrammar.model(for: FollowUpQuestion(prompt: "Order?", expectation: .confirmation(voiceAllowed: true)))
        let yes = Resolver(model: model).resolve("yes")
        #expect(RunMachine.confirmation(answer: yes, voiceAllowed: true) == .accept)
        #expect(RunMachine.confirmation(answer: yes, voiceAllowed: false) == .voiceRefused)
        #expect(RunMachine.confirmation(answer: Resolver(model: model).resolve("no"), voiceAllowed: true) == .cancel)
        #expect(RunMachine.confirmation(answer: nil, voiceAllowed: true) == .notUnderstood)
    }

    @Test func aWaitIsAskedOnceMoreThenGivenUpAndASuggestionLapses() throws {
        let start = ParleyInstant(seconds: 100)
        let wait = Waiting(.forget, line: "Forget?", window: 20, from: start)
        #expect(wait.lapse(at: start + 19.9) == nil)
        guard case .reask(let again)? = wait.lapse(at: start + 20) else { Issue.record("re-ask"); return }
        #expect(again.deadline == start + 40)
        guard case .giveUp? = again.lapse(at: start + 40) else { Issue.record("give up"); return }
        #expect(again.held(from: start + 39).deadline == start + 59)
        let suggestion = Waiting(.suggestion(try run("ServeChili")), line: "Your usual?", window: 10, from: start)
        guard case .close? = suggestion.lapse(at: start + 10) else { Issue.record("lapse"); return }
    }
}
