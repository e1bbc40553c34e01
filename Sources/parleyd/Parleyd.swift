import ArgumentParser

@main
struct Parleyd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parleyd",
        abstract: "The Parley daemon: listens, understands, answers, runs shortcuts.",
        subcommands: [StoreStress.self])

    func run() async throws {
        print("parleyd: not built yet")
    }
}
