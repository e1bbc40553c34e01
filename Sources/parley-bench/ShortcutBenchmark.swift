import ArgumentParser
import Foundation
import ParleyApps
import ParleyCore

/// `parley-bench shortcuts`: loading and checking a folder of generated
/// shortcut files and recompiling the phrase model with them (what the
/// daemon does when the folder changes), then resolution with them loaded.
struct ShortcutBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shortcuts",
        abstract: "Times loading + validating N shortcut files and recompiling the phrase model; resolver speed with them loaded.")

    @Option(help: "Number of generated shortcut files.") var count = 200
    @Option(help: "Times the whole load + compile is repeated.") var runs = 20
    @Option(help: "Times each transcript is resolved per measurement.") var iterations = 200

    func validate() throws {
        guard count > 0, runs > 0, iterations > 0 else { throw ValidationError("--count, --runs and --iterations must be > 0") }
    }

    /// A shortcut using most of the format: two phrases, a time trigger, an
    /// ask, an intent with fixed values and an output variable, text with a
    /// property, an if/else that runs the previous shortcut (a chain, never
    /// a loop) and a repeat.
    static func file(_ index: Int, phrases: [String]) -> String {
        let previous = index > 0 ? "\n          - shortcut: Routine \(index - 1)" : "\n          - speak: first"
        return """
            name: Routine \(index)
            phrases: [\(phrases.map { "\"\($0)\"" }.joined(separator: ", "))]
            triggers:
              - time: "\(String(format: "%02d:%02d", index % 24, index % 60))"
                days: [mon, wed, fri]
            actions:
              - ask: How many?
                as: count
                type: number
              - run: SoupChef.OrderSoup
                with: { soup: tomato, quantity: 2, orderType: pickup }
                as: order
              - speak: "Total {order.total} for {count}."
              - if: count
                above: 3
                then:
                  - speak: many
                else:\(previous)
              - repeat: 2
                do:
                  - sound: chime
            """
    }

    /// CPU time of the calling thread: what the work costs, without the time
    /// spent waiting for a core while other processes run.
    static func threadCPUNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    func run() throws {
        let registry = try AppRegistry(apps: BundledApps.all, primaryApp: BundledApps.defaultPrimary)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-bench-shortcuts-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let phrases = ResolveBenchmark.generatedPhrases(count * 2).map { $0.phrase.replacingOccurrences(of: " mode", with: " routine") }
        for index in 0..<count {
            try Self.file(index, phrases: [phrases[2 * index], phrases[2 * index + 1]])
                .write(to: directory.appendingPathComponent(String(format: "routine-%03d.yaml", index)), atomically: true, encoding: .utf8)
        }

        var loadTimes: [Double] = [], compileTimes: [Double] = [], totalTimes: [Double] = [], cpuTimes: [Double] = []
        var library = ShortcutLibrary()
        var resolver = Resolver(model: PhraseModel())
        var model = PhraseModel()
        for _ in 0..<runs {
            // What the daemon does on a change: the base model (apps, built-ins) for clash
            // checks, every file loaded and validated, then the model with the shortcuts.
            let cpuStart = Self.threadCPUNanoseconds()
            let loadNs = ResolveBenchmark.nanoseconds {
                library = ShortcutLibrary.load(directory: directory.path, environment: ShortcutEnvironment(registry: registry))
            }
            let compileNs = ResolveBenchmark.nanoseconds {
                model = PhraseCompiler.compile(registry, shortcuts: library.shortcuts)
                resolver = Resolver(model: model)
            }
            cpuTimes.append(Double(Self.threadCPUNanoseconds() - cpuStart) / 1e6)
            loadTimes.append(Double(loadNs) / 1e6)
            compileTimes.append(Double(compileNs) / 1e6)
            totalTimes.append(Double(loadNs + compileNs) / 1e6)
        }
        guard library.problems.isEmpty, library.shortcuts.count == count else {
            print("generated shortcuts did not all load: \(library.problems.prefix(5).map(\.description))")
            throw ExitCode(2)
        }

        var transcripts = ResolveBenchmark.transcripts
        for phrase in phrases.prefix(20) { transcripts.append(("please " + phrase, true)) }
        transcripts.append(("what does routine seven do", true))
        let (perUtterance, correct) = ResolveBenchmark.timeResolution(resolver, transcripts, iterations: iterations)

        print("\(count) shortcut files, \(library.shortcuts.count) loaded; phrase model: \(model.rules.count) rules, \(model.words.count) words")
        print(String(format: "load + validate:     median %.2f ms", ResolveBenchmark.median(loadTimes)))
        print(String(format: "recompile model:     median %.2f ms", ResolveBenchmark.median(compileTimes)))
        print(String(format: "total:               median %.2f ms (target < 100 ms), max %.2f ms, %d runs",
                     ResolveBenchmark.median(totalTimes), totalTimes.max() ?? 0, runs))
        print(String(format: "total CPU (thread):  median %.2f ms (the wall figures include waiting for a core on a loaded machine)",
                     ResolveBenchmark.median(cpuTimes)))
        print(String(format: "resolve: median %.2f µs per utterance (target < 20 µs), p90 %.2f µs, max %.2f µs; %d transcripts x %d iterations",
                     ResolveBenchmark.median(perUtterance), ResolveBenchmark.percentile(perUtterance, 0.9), perUtterance.max() ?? 0,
                     transcripts.count, iterations))
        print("resolve: \(correct)/\(transcripts.count) transcripts resolved or rejected as expected")
        if correct != transcripts.count { throw ExitCode(2) }
    }
}
