import ArgumentParser

/// Minimal root command (audio helper); other benchmark groups register their
/// subcommands here.
struct ParleyBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley-bench", abstract: "Parley benchmarks and evaluations (run in release mode).",
        subcommands: [AudioBenchCommand.self])
}

ParleyBench.main()
