import Foundation

/// Reads a multipart/form-data body as it arrives (RFC 7578), never whole:
/// small fields come out as text, a file part as a run of byte chunks, so
/// an update bundle of a gigabyte goes to disk as it is read. At most
/// `maximumField` bytes for a field and `maximumHeaders` for a part's
/// headers; past them, and for a body that is not multipart as the
/// boundary says, it throws.
struct MultipartReader {
    enum Event: Equatable {
        case field(name: String, value: String)
        case fileStart(name: String, filename: String)
        case fileData([UInt8])
        case fileEnd
    }

    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    private enum State {
        /// Before the first boundary (the body's preamble).
        case preamble
        /// Just after a boundary: "--" ends the body, CRLF starts a part.
        case afterBoundary
        case headers
        case field(name: String)
        case file
        case done
    }

    static let maximumField = 4 * 1024
    static let maximumHeaders = 8 * 1024

    /// "\r\n--boundary": what ends every part (the body is read as if a CRLF preceded it).
    private let delimiter: [UInt8]
    private var buffer: [UInt8] = [13, 10]
    private var state = State.preamble
    private var fieldBytes: [UInt8] = []

    var finished: Bool { if case .done = state { true } else { false } }

    /// `contentType`: the request's Content-Type; nil unless multipart/form-data with a boundary.
    init?(contentType: String?) {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        guard let range = contentType.range(of: "boundary=", options: .caseInsensitive) else { return nil }
        var boundary = String(contentType[range.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 { boundary = String(boundary.dropFirst().dropLast()) }
        guard (1...70).contains(boundary.utf8.count) else { return nil }
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// The events `bytes` completes, in order.
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Malformed) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        while true {
            switch state {
            case .done:
                buffer.removeAll()
                return events
            case .preamble:
                guard let at = find(delimiter) else {
                    buffer.removeFirst(max(0, buffer.count - delimiter.count))
                    return events
                }
                buffer.removeFirst(at + delimiter.count)
                state = .afterBoundary
            case .afterBoundary:
                guard buffer.count >= 2 else { return events }
                if buffer[0] == 45 && buffer[1] == 45 { state = .done; continue }
                guard buffer[0] == 13 && buffer[1] == 10 else { throw Malformed(description: "a boundary is not followed by CRLF or \"--\"") }
                buffer.removeFirst(2)
                state = .headers
            case .headers:
                guard let end = find([13, 10, 13, 10]) else {
                    if buffer.count > Self.maximumHeaders { throw Malformed(description: "a part's headers are longer than \(Self.maximumHeaders) bytes") }
                    return events
                }
                let headers = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                let (name, filename) = Self.disposition(headers)
                guard let name else { throw Malformed(description: "a part has no Content-Disposition name") }
                if let filename {
                    events.append(.fileStart(name: name, filename: filename))
                    state = .file
                } else {
                    fieldBytes = []
                    state = .field(name: name)
                }
            case .field(let name):
                let at = find(delimiter)
                let take = at ?? max(0, buffer.count - delimiter.count + 1)
                fieldBytes.append(contentsOf: buffer[..<take])
                buffer.removeFirst(take)
                if fieldBytes.count > Self.maximumField { throw Malformed(description: "the field \"\(name)\" is longer than \(Self.maximumField) bytes") }
                guard at != nil else { return events }
                buffer.removeFirst(delimiter.count)
                events.append(.field(name: name, value: String(decoding: fieldBytes, as: UTF8.self)))
                state = .afterBoundary
            case .file:
                let at = find(delimiter)
                let take = at ?? max(0, buffer.count - delimiter.count + 1)
                if take > 0 { events.append(.fileData(Array(buffer[..<take]))) }
                buffer.removeFirst(take)
                guard at != nil else { return events }
                buffer.removeFirst(delimiter.count)
                events.append(.fileEnd)
                state = .afterBoundary
            }
        }
    }

    /// The first index of `pattern` in the buffer.
    private func find(_ pattern: [UInt8]) -> Int? {
        guard let first = pattern.first, buffer.count >= pattern.count else { return nil }
        var index = 0
        let last = buffer.count - pattern.count
        while index <= last {
            guard let candidate = buffer[index...last].firstIndex(of: first) else { return nil }
            if buffer[candidate..<(candidate + pattern.count)].elementsEqual(pattern) { return candidate }
            index = candidate + 1
        }
        return nil
    }

    /// `name` and `filename` of a part's Content-Disposition header.
    static func disposition(_ headers: String) -> (name: String?, filename: String?) {
        guard let line = headers.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-disposition:") }) else {
            return (nil, nil)
        }
        var name: String?, filename: String?
        for parameter in line.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            var value = pair[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            switch pair[0].lowercased() {
            case "name": name = value
            case "filename": filename = value
            default: break
            }
        }
        return (name, filename)
    }
}
