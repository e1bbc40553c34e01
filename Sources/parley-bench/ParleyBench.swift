import ArgumentParser
import ParleyDevice

/// `parley-bench`: benchmarks, run in release mode. One subcommand per
/// benchmark, each in its own file.
struct ParleyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley-bench",
        abstract: "Parley's benchmarks (build with -c release).",
        subcommands: [ResolveBenchmark.self, ShortcutBenchmark.self, AudioBenchCommand.self, SpeechCoffee.self, SpeechStreaming.self, SpeechWake.self, SpeechWakeScores.self, SpeechEmbeddingCost.self, SpeechSynthesis.self, DictationBench.self, HandlerBench.self, AppInstallBench.self])
}

/// A synchronous entry point (see `BlockingMain`: valgrind cannot run Swift's async main).
@main
enum ParleyBenchMain {
    static func main() { BlockingMain.run { await ParleyBench.main() } }
}
