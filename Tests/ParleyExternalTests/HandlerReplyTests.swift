import Foundation
import Testing

@testable import ParleyExternal

/// The handler protocol reader: one output line of a handler read as a reply
/// (the fuzz target `handler` drives the same function with arbitrary bytes).
@Suite struct HandlerReplyTests {
    func reply(_ line: String) -> JSONRPC.Reply { JSONRPC.reply(to: Data(line.utf8)) }

    @Test func answersErrorsAndEverythingElse() {
        #expect(reply(#"{"jsonrpc":"2.0","id":4,"result":{"dialog":"Done."}}"#) == .answer(id: 4, .success(["dialog": "Done."])))
        #expect(reply(#"{"jsonrpc":"2.0","id":"5","result":null}"#) == .answer(id: 5, .success(.null)))
        #expect(reply(#"{"id":6,"error":{"code":-32601,"message":"no"}}"#) == .answer(id: 6, .failure(.notImplemented)))
        #expect(reply(#"{"id":7,"error":{"code":3,"message":"Out of soup."}}"#)
                == .answer(id: 7, .failure(.appError(code: 3, message: "Out of soup."))))
        #expect(reply(#"{"id":8}"#) == .answer(id: 8, .failure(.badAnswer("neither a result nor an error"))))
        #expect(reply(#"{"jsonrpc":"2.0","method":"log"}"#) == .unsolicited)
        #expect(reply(#"{"id":1.5,"result":1}"#) == .unsolicited)
        #expect(reply(#"[1,2]"#) == .notJSON(excerpt: "[1,2]"))
        #expect(reply(String(repeating: "x", count: 500)) == .notJSON(excerpt: String(repeating: "x", count: 80)))
        #expect(JSONRPC.reply(to: Data([0xFF, 0xFE, 0x00])) == .notJSON(excerpt: "\u{FFFD}\u{FFFD}\u{0}"))
    }
}
