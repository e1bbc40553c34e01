import Foundation
@testable import ParleyCore
import ParleyTestKit
import Synchronization
import Testing

/// How many more times `JarQuery` fails before it answers (one test uses it).
private let jarQueryFailures = Atomic<Int>(0)
/// How many times `JarQuery` was asked for its suggested values.
private let jarQueryCalls = Atomic<Int>(0)

/// A jar in the pantry: an entity whose values come from its query, like an
/// external app's handler that may not answer in time.
private struct Jar: AppEntity, Hashable {
    let id: String
    let displayName: String
    static let typeDisplayName = "Jar"
    static let defaultQuery = JarQuery()
    static let all = [Jar(id: "jam", displayName: "jam"), Jar(id: "honey", displayName: "honey")]
}

private struct JarQuery: EntityQuery {
    struct NotReady: Error, CustomStringConvertible { var description: String { "the pantry did not answer in time" } }
    func entities(for identifiers: [String], context: IntentContext) async throws -> [Jar] {
        Jar.all.filter { identifiers.contains($0.id) }
    }
    func suggestedEntities(context: IntentContext) async throws -> [Jar] {
        jarQueryCalls.add(1, ordering: .relaxed)
        if jarQueryFailures.subtract(1, ordering: .relaxed).oldValue > 0 { throw NotReady() }
        return Jar.all
    }
}

private struct OpenJar: AppIntent {
    static let title = "Open a jar"
    static let category = IntentCategory.generic
    @Parameter(title: "Jar", prompt: "Which jar?") var jar: Jar
    init() {}
    func perform(context: IntentContext) async throws -> IntentResult { IntentResult(dialog: "Opened the \(jar.displayName).") }
}

private struct PantryApp: ParleyApp {
    let identifier = "Pantry"
    let name = "Pantry"
    var intents: [any AppIntent.Type] { [OpenJar.self] }
    var shortcuts: [AppShortcut] {
        [AppShortcut(intent: OpenJar.self, phrases: ["open the {jar} jar in the {app}"], shortTitle: "Open a jar")]
    }
}

@Suite(.serialized) struct VocabularyRetryTests {
    @Test func theScheduleBacksOffWhileValuesAreMissingAndEndsWhenTheyArrive() {
        let start = ParleyInstant(seconds: 100)
        let missing = ["Pantry.OpenJar.jar": "no answer"]
        var retry: VocabularyRetry? = nil
        var intervals: [TimeInterval] = []
        for _ in 0..<9 {
            retry = retry.next(unavailable: missing, at: start)
            intervals.append(retry?.interval ?? -1)
        }
        #expect(intervals == [5, 10, 20, 40, 80, 160, 300, 300, 300])
        #expect(retry?.due == start + 300)
        #expect(retry.next(unavailable: [:], at: start) == nil)
    }

    /// A first compile whose values did not come (a handler slow to start on a
    /// busy CPU) left the phrase without them until the next reload: the
    /// phrase was not understood for good. Now the engine asks again.
    @Test func phrasesCompiledWithoutAnAppsValuesAreCompiledAgainLater() async throws {
        jarQueryFailures.store(1, ordering: .relaxed)
        jarQueryCalls.store(0, ordering: .relaxed)
        let h = try EngineHarness(apps: [PantryApp()])
        let first = await h.say("open the jam jar in the pantry")
        #expect(!first.contains("Opened the jam."), "compiled without the jars, so not understood: \(first)")
        #expect(jarQueryCalls.load(ordering: .relaxed) == 1)
        let logs = await h.sink.events.compactMap { if case .log(let line) = $0 { line } else { nil } }
        #expect(logs.contains { $0.contains("Pantry.OpenJar.jar (the pantry did not answer in time)") && $0.contains("again in 5 s") }, "\(logs)")
        // Not asked again before the retry is due.
        _ = await h.say("open the jam jar in the pantry")
        #expect(jarQueryCalls.load(ordering: .relaxed) == 1)
        // Idle when it is due: compiled again at the tick, and the recogniser told.
        _ = await h.wait(5)
        #expect(jarQueryCalls.load(ordering: .relaxed) == 2)
        #expect(await h.sink.events.contains { if case .listening(.commands) = $0 { true } else { false } })
        #expect(await h.say("open the honey jar in the pantry") == ["Opened the honey."])
        // Nothing is missing any more: no further asking.
        _ = await h.wait(600)
        #expect(jarQueryCalls.load(ordering: .relaxed) == 2)
    }
}
