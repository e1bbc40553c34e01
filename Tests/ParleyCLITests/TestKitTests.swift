import Foundation
import ParleyTestKit
import Testing

/// The test kit's waits and temporary directories, which every other suite trusts.
@Suite struct TestKitTests {
    @Test func aWaitThatNeverHappensFailsWithItsReasonAfterItsBound() async throws {
        var asked = 0
        let error = await #expect(throws: Poll.NeverHappened.self) {
            try await Poll.until("the kettle boiled", polls: 5, every: .milliseconds(1)) { asked += 1; return false }
        }
        #expect(asked == 5)
        #expect(error?.description == "never happened (asked 5 times): the kettle boiled")
        #expect(try await Poll.holds("never", polls: 3, every: .milliseconds(1)) { false } == false)
        asked = 0
        let held = Poll.holdsBlocking("never", polls: 4, every: .microseconds(10)) { asked += 1; return false }
        #expect(held == false)
        #expect(asked == 4)
        #expect(throws: Poll.NeverHappened.self) { try Poll.untilBlocking("never", polls: 2, every: .microseconds(10)) { false } }
    }

    @Test func aWaitEndsAtTheFirstPollThatHoldsAndGivesItsValue() async throws {
        var asked = 0
        let value = try await Poll.value("the third answer", polls: 10, every: .milliseconds(1)) { () -> String? in
            asked += 1
            return asked == 3 ? "three" : nil
        }
        #expect(value == "three" && asked == 3)
        asked = 0
        #expect(try Poll.valueBlocking("the second answer", polls: 10, every: .microseconds(10)) { () -> Int? in
            asked += 1
            return asked == 2 ? 2 : nil
        } == 2)
        #expect(asked == 2)
    }

    @Test func aTemporaryDirectoryIsShortFreshAndRemoved() throws {
        var path = ""
        do {
            let dir = try TemporaryDirectory()
            path = dir.path
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(dir.file("parley.sock").utf8.count < 40, "room for a Unix socket path (108 bytes)")
            #expect(dir.url.path == path)
            #expect(try TemporaryDirectory().path != path)
            try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("a")))
            dir.remove()
            #expect(!FileManager.default.fileExists(atPath: path))
        }
        do {
            let dropped = try TemporaryDirectory()
            path = dropped.path
            try Data("x".utf8).write(to: URL(fileURLWithPath: dropped.file("a")))
        }
        #expect(!FileManager.default.fileExists(atPath: path), "removed with its last reference")
    }
}
