import ArgumentParser
import Foundation

/// Benchmarks and evaluations, run in release mode (see BENCHMARKS.md).
struct ParleyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley-bench",
        abstract: "Parley benchmarks and evaluations.",
        subcommands: [SpeechCoffee.self, SpeechWake.self, SpeechSynthesis.self])
}

ParleyBench.main()
