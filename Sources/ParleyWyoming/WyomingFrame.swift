import Foundation
import ParleyExternal

/// One Wyoming event on the wire (Wyoming 1.9): a JSON header line
/// (`type`, `data`, `data_length`, `payload_length`, `version`), then
/// `data_length` bytes of JSON merged into `data`, then `payload_length`
/// bytes of payload (PCM for audio).
public struct WyomingFrame: Sendable, Equatable {
    public var type: String
    public var data: [String: JSONValue]
    public var payload: Data

    public init(type: String, data: [String: JSONValue] = [:], payload: Data = Data()) {
        self.type = type
        self.data = data
        self.payload = payload
    }
}

/// What one event may hold. Home Assistant's events are small (a header of a
/// few hundred bytes, audio chunks of a few KiB); anything far beyond is a
/// broken or hostile peer, and it must not make the device buffer without end.
public struct WyomingLimits: Sendable, Hashable {
    /// The header line, newline excluded.
    public var headerBytes = 16 * 1024
    /// The extra JSON after the header (`data_length`): an `info` with many programs.
    public var dataBytes = 256 * 1024
    /// One payload (`payload_length`): one second of 22,050 Hz 16-bit stereo is 88 KiB.
    public var payloadBytes = 512 * 1024

    public init() {}
}

/// Anything malformed on a Wyoming connection; the connection is closed after it.
public struct WyomingProtocolError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Turns events into bytes, as the Python package writes them.
public enum WyomingEncoder {
    /// The protocol version Parley speaks (sent in every header, as the Python package does).
    public static let version = "1.9.0"

    public static func encode(_ frame: WyomingFrame) -> Data {
        var header: [String: JSONValue] = ["type": .string(frame.type), "version": .string(version)]
        var dataBytes = Data()
        if !frame.data.isEmpty {
            dataBytes = json(.object(frame.data))
            header["data_length"] = .number(Double(dataBytes.count))
        }
        if !frame.payload.isEmpty { header["payload_length"] = .number(Double(frame.payload.count)) }
        var bytes = json(.object(header))
        bytes.append(0x0A)
        bytes.append(dataBytes)
        bytes.append(frame.payload)
        return bytes
    }

    private static func json(_ value: JSONValue) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A JSONValue always encodes: it holds only JSON's own kinds (a
        // non-finite number is never made by the decoder or the event types).
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
}

/// Reads events from a byte stream fed in pieces of any size (a socket's
/// reads). Every length is checked against ``WyomingLimits`` before
/// anything is buffered for it; the first error is final (the caller closes
/// the connection).
public struct WyomingDecoder: Sendable {
    public let limits: WyomingLimits
    private var buffer = Data()
    private var pending: Pending?

    /// A header read whose data and payload have not all arrived yet.
    private struct Pending: Sendable {
        var type: String
        var data: [String: JSONValue]
        var dataLength: Int
        var payloadLength: Int
    }

    public init(limits: WyomingLimits = WyomingLimits()) {
        self.limits = limits
    }

    /// Bytes buffered and not yet part of an event.
    public var bufferedBytes: Int { buffer.count }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole event, or nil until more bytes arrive.
    public mutating func next() throws(WyomingProtocolError) -> WyomingFrame? {
        if pending == nil {
            guard let newline = buffer.firstIndex(of: 0x0A) else {
                if buffer.count > limits.headerBytes {
                    throw WyomingProtocolError(
                        "header line longer than \(limits.headerBytes) bytes without a newline (expected one JSON object per line)")
                }
                return nil
            }
            let line = buffer[buffer.startIndex..<newline]
            guard line.count <= limits.headerBytes else {
                throw WyomingProtocolError("header line of \(line.count) bytes; at most \(limits.headerBytes) are accepted")
            }
            pending = try Self.header(Data(line), limits: limits)
            buffer.removeSubrange(buffer.startIndex...newline)
        }
        guard let header = pending, buffer.count >= header.dataLength + header.payloadLength else { return nil }
        var data = header.data
        if header.dataLength > 0 {
            let extra = try Self.object(buffer.prefix(header.dataLength), what: "the \(header.dataLength) bytes of data of \"\(header.type)\"")
            data.merge(extra) { _, new in new }
        }
        let payloadStart = buffer.startIndex + header.dataLength
        let payload = Data(buffer[payloadStart..<payloadStart + header.payloadLength])
        buffer.removeSubrange(buffer.startIndex..<payloadStart + header.payloadLength)
        pending = nil
        return WyomingFrame(type: header.type, data: data, payload: payload)
    }

    private static func header(_ line: Data, limits: WyomingLimits) throws(WyomingProtocolError) -> Pending {
        let object = try object(line, what: "header line \(preview(line))")
        guard case .string(let type)? = object["type"], !type.isEmpty else {
            throw WyomingProtocolError("header line \(preview(line)) has no \"type\" string")
        }
        var data: [String: JSONValue] = [:]
        switch object["data"] {
        case nil, .null?: break
        case .object(let value)?: data = value
        case let other?: throw WyomingProtocolError("\"data\" of \"\(type)\" is \(other.kindName); expected an object")
        }
        let dataLength = try length(object["data_length"], name: "data_length", type: type, limit: limits.dataBytes)
        let payloadLength = try length(object["payload_length"], name: "payload_length", type: type, limit: limits.payloadBytes)
        return Pending(type: type, data: data, dataLength: dataLength, payloadLength: payloadLength)
    }

    private static func length(_ value: JSONValue?, name: String, type: String, limit: Int) throws(WyomingProtocolError) -> Int {
        guard let value, !value.isNull else { return 0 }
        guard case .number(let number) = value, number >= 0, number == number.rounded(), number < 1e15 else {
            throw WyomingProtocolError("\(name) of \"\(type)\" is \(value.canonicalString ?? value.kindName); expected a whole number of bytes, 0 or more")
        }
        guard Int(number) <= limit else {
            throw WyomingProtocolError("\(name) of \"\(type)\" is \(Int(number)) bytes; at most \(limit) are accepted")
        }
        return Int(number)
    }

    private static func object(_ bytes: Data, what: String) throws(WyomingProtocolError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: bytes)
        } catch {
            throw WyomingProtocolError("\(what) is not JSON")
        }
        guard case .object(let object) = value else {
            throw WyomingProtocolError("\(what) is \(value.kindName); expected a JSON object")
        }
        return object
    }

    /// The start of a line for an error message, printable.
    static func preview(_ line: Data) -> String {
        let text = String(decoding: line.prefix(60), as: UTF8.self)
            .map { $0.isASCII && ($0.isLetter || $0.isNumber || $0.isPunctuation || $0.isSymbol || $0 == " ") ? String($0) : "?" }
            .joined()
        return "\"\(text)\(line.count > 60 ? "…" : "")\""
    }
}
