import Dispatch
import Foundation
import Logging
import ParleyApps
import ParleyAudio
import ParleyConfiguration
import ParleyCore
import ParleySpeech
import ParleyTestKit
import ServiceLifecycle
import Synchronization
import Testing

@testable import ParleyDaemon

/// A grammar compile that takes as long as the test wants, standing in for
/// the seconds a slow board takes: it says when it has started and runs
/// until released. Every event is recorded in order with the test's own.
final class CompileGate: Sendable {
    private let state = Mutex<(started: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))
    private let release = DispatchSemaphore(value: 0)
    let events = Mutex<[String]>([])

    func record(_ event: String) { events.withLock { $0.append(event) } }

    /// The compile: records its start and end around the real compiler.
    func compile(_ model: PhraseModel) throws -> WordGraph {
        record("compile started")
        let waiting = state.withLock { s in
            s.started += 1
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiting { waiter.resume() }
        release.wait()
        defer { record("compile ended") }
        return try GrammarCompiler().graph(for: model)
    }

    /// Returns once `count` compiles have started.
    func started(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.started >= count { return true }
                s.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        if state.withLock({ $0.started }) < count { await started(count) }
    }

    /// Lets one compile finish.
    func finishOne() { release.signal() }

    /// A broken build's safety net, not a timing assertion: a wait that
    /// never ends by itself is let go after `seconds`, so the test fails on
    /// the order of events instead of hanging.
    func finishAll(after seconds: Int) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            for _ in 0..<8 { release.signal() }
        }
    }
}

/// The listening grammars are compiled off the asking task (GrammarBuilds):
/// a stop never waits for a compile, and a grammar compiled after a newer
/// one was asked for is dropped. Before, each asker compiled for itself:
/// on arm64 under qemu-user the shortcut folder's start-up reload held a
/// stop past the 4 s watchdog (`still-running=ShortcutFolder`).
@Suite struct GrammarBuildsTests {
    static func model(_ words: String) -> PhraseModel {
        PhraseModel(rules: [PhraseRule(id: words, target: .builtin(PhraseCompiler.Builtin.cancel),
                                       body: .words(words.split(separator: " ").map(String.init)))])
    }

    /// Builds whose compiles the gate holds, each outcome recorded with the
    /// test's events, and the safety net (cancel it at the end).
    static func gated() -> (CompileGate, GrammarBuilds, Task<Void, Never>) {
        let gate = CompileGate()
        return (gate, GrammarBuilds(compile: gate.compile) { gate.record("\($0)") }, gate.finishAll(after: 120))
    }

    @Test func aWaitEndsWhenItsTaskIsCancelledNotWhenTheCompileDoes() async throws {
        let (gate, builds, safety) = Self.gated()
        defer { safety.cancel() }
        let version = try #require(builds.request(Self.model("coffee time"), kind: .commands))
        await gate.started(1)
        let waiter = Task { await builds.wait(for: version) }
        waiter.cancel()
        let settled = await waiter.value
        gate.record("wait returned")
        gate.finishOne()
        // The request stands (only the wait was given up): it is installed once compiled.
        await builds.wait(for: version)
        #expect(!settled)
        #expect(gate.events.withLock { $0 } == [
            "compile started", "wait returned", "compile ended", "installed(version: 1)",
        ])
        #expect(builds.current.version == 1 && builds.current.model.rules.map(\.id) == ["coffee time"])
    }

    @Test func stopEndsEveryWaitAndDropsWhatIsCompiling() async throws {
        let (gate, builds, safety) = Self.gated()
        defer { safety.cancel() }
        let first = try #require(builds.request(Self.model("coffee time"), kind: .commands))
        await gate.started(1)
        let second = try #require(builds.request(Self.model("tea time"), kind: .window))  // waits for the queue
        let waiters = [Task { await builds.wait(for: first) }, Task { await builds.wait(for: second) }]
        builds.stop()
        for waiter in waiters { #expect(await waiter.value == false) }
        gate.record("waits returned")
        #expect(builds.request(Self.model("soup"), kind: .commands) == nil, "nothing is asked for once stopped")
        gate.finishOne()
        try await Poll.until("the compile finished after the stop dropped") { gate.events.withLock { $0.contains("dropped(version: 1)") } }
        #expect(gate.events.withLock { $0 } == ["compile started", "waits returned", "compile ended", "dropped(version: 1)"],
                "the waiting request is never compiled, the one compiling is not installed")
        #expect(builds.current.version == 0, "nothing installed after the stop")
    }

    /// A question's answers asked for while the commands grammar still
    /// compiles: the commands grammar, done last, must not replace them;
    /// and a request replaced before its turn is never compiled.
    @Test func theNewestRequestWinsWhateverFinishesLast() async throws {
        let (gate, builds, safety) = Self.gated()
        defer { safety.cancel() }
        let commands = try #require(builds.request(Self.model("coffee time"), kind: .commands))
        await gate.started(1)
        let window = try #require(builds.request(Self.model("hey coffee time"), kind: .window))
        let answers = try #require(builds.request(Self.model("large"), kind: .followUp))
        // The reload's asker waits until a grammar at least as new as its own is in use.
        let reload = Task { await builds.wait(for: commands) }
        gate.finishOne()
        await gate.started(2)
        gate.finishOne()
        #expect(await reload.value)
        #expect(await builds.wait(for: answers))
        #expect(gate.events.withLock { $0 } == [
            "compile started", "compile ended", "dropped(version: 1)", "compile started", "compile ended", "installed(version: 3)",
        ])
        #expect(window == 2)
        #expect(builds.current.kind == .followUp && builds.current.model.rules.map(\.id) == ["large"])
    }

    /// The engine asks for the commands at start, while the listen thread
    /// compiles them for itself, and after every conversation: the grammar
    /// already current (or about to be, at start) is not compiled again, so
    /// nothing said meanwhile is decoded twice; another grammar still is.
    @Test func theGrammarAlreadyInUseIsNotCompiledAgain() async throws {
        let (gate, builds, safety) = Self.gated()
        defer { safety.cancel() }
        let commands = Self.model("coffee time")
        builds.expectInitial(commands)
        #expect(builds.request(commands, kind: .commands) == 0, "the start grammar, before the listen thread installed it")
        builds.setInitial(commands, graph: try GrammarCompiler().graph(for: commands))
        #expect(builds.request(commands, kind: .commands) == 0)
        #expect(builds.request(commands, kind: .window) == 1, "the same phrases as another kind of grammar are compiled")
        await gate.started(1)
        gate.finishOne()
        #expect(await builds.wait(for: 1))
        let back = try #require(builds.request(commands, kind: .commands))
        await gate.started(2)
        gate.finishOne()
        #expect(await builds.wait(for: back))
        #expect(builds.request(commands, kind: .commands) == back)
        #expect(gate.events.withLock { $0 } == [
            "compile started", "compile ended", "installed(version: 1)", "compile started", "compile ended", "installed(version: 2)",
        ])
    }
}

/// The stop itself: a service (the shortcut folder) whose start-up reload
/// asks for a grammar that is still compiling when the stop comes, with the
/// listening pipeline in the same group, in the daemon's order (listening
/// stops first) and the other way round. The group ends before the compile does.
@Suite(.serialized) struct GrammarStopTests {
    @Test(arguments: [true, false]) func aStopDoesNotWaitForTheShortcutFolderReloadsGrammar(listeningStopsFirst: Bool)
        async throws
    {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let wav = URL(fileURLWithPath: dir.file("silence.wav"))
        try WAVFile.write([Int16](repeating: 0, count: 16_000), sampleRate: 16_000, to: wav)
        let capture = try CaptureService(configuration: CaptureConfiguration.file(
            wav: wav, workDirectory: URL(fileURLWithPath: dir.path), pacing: .device, ringSeconds: 4))
        let harness = try EngineHarness(apps: BundledApps.all)
        var wake = ParleyConfig.Wake()
        wake.named = false
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let gate = CompileGate()
        let safety = gate.finishAll(after: 120)
        defer { safety.cancel() }
        let pipeline = ListeningPipeline(
            capture: capture, engine: harness.engine, wake: wake, endpointSilence: .milliseconds(600),
            playbackName: "none", latency: LatencyProbe(), logger: quiet, compileGrammar: gate.compile)
        let registry = try AppRegistry(apps: BundledApps.all)
        let folder = ShortcutFolder(directory: dir.file("shortcuts"), logger: quiet,
                                    environment: { ShortcutEnvironment(registry: registry) },
                                    // The window's grammar: a request for the grammar already
                                    // current compiles nothing (GrammarBuilds.request).
                                    apply: { _ in await pipeline.listen(.window) })
        // ServiceGroup stops the last service first.
        let services: [any Service] = listeningStopsFirst ? [folder, pipeline] : [pipeline, folder]
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: quiet))
        let running = Task { try await group.run() }
        await gate.started(1)  // the folder's reload is compiling
        await group.triggerGracefulShutdown()
        try await running.value
        gate.record("group ended")
        gate.finishOne()
        try await Poll.until("the reload's compile ended") { gate.events.withLock { $0.contains("compile ended") } }
        #expect(gate.events.withLock { $0 } == ["compile started", "group ended", "compile ended"])
    }
}
