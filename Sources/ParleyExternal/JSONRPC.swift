import Foundation

/// JSON-RPC 2.0 as handlers speak it: one object per line (docs/external-apps.md).
public enum JSONRPC {
    /// The methods Parley calls.
    public enum Method: String, Sendable, CaseIterable {
        case perform, resolve, options, confirmation
        /// A notification: no answer is expected.
        case shutdown
    }

    /// The one notification a handler sends Parley: the values its `options`
    /// method gives have changed (names fetched from a hub after it came
    /// back), so the phrases are compiled again. Added to the protocol
    /// for dynamic entity values; no params.
    public static let optionsChanged = "options-changed"

    /// "Method not found": the handler leaves this step to Parley.
    public static let methodNotFound = -32601

    struct Request: Encodable {
        let jsonrpc = "2.0"
        var id: Int?
        var method: String
        var params: JSONValue?
    }

    struct ErrorObject: Decodable, Sendable {
        var code: Int
        var message: String
    }

    /// One line from a handler, read as a response.
    struct Response: Decodable, Sendable {
        var jsonrpc: String?
        var id: JSONValue?
        var result: JSONValue?
        var error: ErrorObject?
        var method: String?

        enum CodingKeys: String, CodingKey { case jsonrpc, id, result, error, method }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            jsonrpc = try container.decodeIfPresent(String.self, forKey: .jsonrpc)
            id = try container.decodeIfPresent(JSONValue.self, forKey: .id)
            error = try container.decodeIfPresent(ErrorObject.self, forKey: .error)
            method = try? container.decodeIfPresent(String.self, forKey: .method)
            // A present `"result": null` is a result; a missing one is not.
            result = container.contains(.result) ? try container.decode(JSONValue.self, forKey: .result) : nil
        }
    }

    /// What one line of a handler's standard output means.
    public enum Reply: Sendable, Equatable {
        /// The answer to request `id`: its result, or the failure it reports.
        case answer(id: Int, Result<JSONValue, HandlerFailure>)
        /// A JSON object that answers no numbered request (a notification or a stray id).
        case unsolicited
        /// The handler's `options-changed` notification (no id).
        case optionsChanged
        /// Not a JSON-RPC response object; `excerpt` is the start of the line, for the log.
        case notJSON(excerpt: String)
    }

    /// Reads one output line of a handler (the protocol reader: every byte of
    /// it comes from a program Parley does not control).
    public static func reply(to line: Data) -> Reply {
        guard let response = try? JSONDecoder().decode(Response.self, from: line) else {
            return .notJSON(excerpt: String(decoding: line.prefix(80), as: UTF8.self))
        }
        guard let id = response.id.flatMap({ $0.canonicalString }).flatMap(Int.init) else {
            return response.id == nil && response.method == optionsChanged ? .optionsChanged : .unsolicited
        }
        if let error = response.error {
            return .answer(id: id, .failure(error.code == methodNotFound
                ? .notImplemented : .appError(code: error.code, message: error.message)))
        }
        if let result = response.result { return .answer(id: id, .success(result)) }
        return .answer(id: id, .failure(.badAnswer("neither a result nor an error")))
    }

    /// One request or notification as a line, newline included.
    static func line(id: Int?, method: Method, params: JSONValue?) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Encoding these types cannot fail: every value is a plain JSON value.
        var data = (try? encoder.encode(Request(id: id, method: method.rawValue, params: params))) ?? Data()
        data.append(0x0A)
        return data
    }
}
