import Foundation
import Synchronization
import Testing

@testable import ParleySocket

/// A connection thread's async work runs on that thread: it needs no thread
/// of Swift's shared pool, which blocking work elsewhere may all hold.
struct ConnectionThreadTests {
    actor Counter {
        var count = 0
        func bump() -> Int {
            count += 1
            return count
        }
    }

    /// The thread a closure runs on, as a number.
    static func threadID() -> UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    @Test func theWorkRunsOnTheWaitingThreadThroughSleepsAndActorHops() async {
        let counter = Counter()
        let seen = Mutex<[UInt]>([])
        let answers: (UInt, Int) = await withCheckedContinuation { continuation in
            let thread = Thread {
                let caller = Self.threadID()
                let value = ConnectionThread.run { () async -> Int in
                    seen.withLock { $0.append(Self.threadID()) }
                    try? await Task.sleep(for: .milliseconds(20))
                    seen.withLock { $0.append(Self.threadID()) }
                    _ = await counter.bump()
                    let count = await counter.bump()
                    seen.withLock { $0.append(Self.threadID()) }
                    return count
                }
                continuation.resume(returning: (caller, value))
            }
            thread.start()
        }
        #expect(answers.1 == 2)
        let threads = seen.withLock { $0 }
        #expect(threads.count == 3)
        #expect(threads.allSatisfy { $0 == answers.0 }, "work left the connection's thread: \(threads) vs \(answers.0)")
    }

    /// Many connection threads at once each get their own answer.
    @Test func concurrentConnectionsEachGetTheirAnswer() async {
        let results = Mutex<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Atomic<Int>(16)
            for index in 0..<16 {
                Thread {
                    let value = ConnectionThread.run { () async -> Int in
                        try? await Task.sleep(for: .milliseconds(5))
                        return index * index
                    }
                    results.withLock { $0.append(value) }
                    if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { continuation.resume() }
                }.start()
            }
        }
        #expect(results.withLock { $0.sorted() } == (0..<16).map { $0 * $0 })
    }
}
