import ArgumentParser
import Foundation
import ParleyCore
import ParleyStore

/// Hidden test mode for the crash-durability test (Tests/ParleyStoreTests):
/// streams writes to a state database and prints `ack <n>` after each one
/// returns, so the test knows exactly which writes were acknowledged before
/// it SIGKILLs this process.
struct StoreStress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-stress", abstract: "Stream acknowledged writes (crash test).", shouldDisplay: false)

    @Option(help: "Database file.") var database: String
    @Option(help: "First write number.") var start: Int = 0
    @Option(help: "Stop after this many writes (0 = until killed).") var count: Int = 0
    @Option(help: "Donations kept (the test keeps every one it checks).") var maxDonations: Int = 10_000

    func run() async throws {
        // The clock is never trusted: what is checked is every write, not the age limit.
        let store = try StateStore(
            path: database, retention: DonationRetention(maximumCount: max(1, maxDonations)), clock: .unsynchronised)
        var n = start
        while count == 0 || n < start + count {
            try await store.record(Donation(
                identifier: "w\(n)", app: "Stress", intent: "Write", parameters: ["n": String(n)],
                date: Date(), trigger: Trigger.console.rawValue))
            try await store.setValue(Data("v\(n)".utf8), app: "Stress", key: "k\(n)")
            // Written with write(2) so nothing sits in a stdio buffer at SIGKILL.
            let line = "ack \(n)\n"
            _ = line.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
            n += 1
        }
    }
}
