// libyaml as Yams builds it: not a product of the Yams package, but a module
// every target depending on Yams can import. Its events are the one place an
// alias is still an alias (Yams' composer hands back the anchored node).
internal import CYaml
import Foundation

/// What one of Parley's YAML files may hold: bytes, nodes and nesting. Each
/// kind of file has its own; every reader passes its limits to
/// `YAMLDocument.parse`, and checks the size again before reading a file
/// (`YAMLDocument.sizeError`), so a huge file costs no memory.
///
/// The caps keep a file that is wrong (or written to hurt) from costing
/// memory or time the device does not have: Yams composes recursively, so a
/// deeply nested file would exhaust the stack, and the readers walk every
/// node.
public struct YAMLLimits: Sendable, Hashable {
    /// What the file is, for messages ("a shortcut file").
    public var kind: String
    public var maximumBytes: Int
    /// Scalars, lists and mappings (keys count: they are scalars).
    public var maximumNodes: Int
    /// Lists and mappings inside one another; the document's top mapping is 1.
    public var maximumDepth: Int

    public init(kind: String, maximumBytes: Int, maximumNodes: Int, maximumDepth: Int) {
        precondition(maximumBytes > 0 && maximumNodes > 0 && maximumDepth > 0)
        self.kind = kind
        self.maximumBytes = maximumBytes
        self.maximumNodes = maximumNodes
        self.maximumDepth = maximumDepth
    }

    /// A page of YAML each, far more is a mistake. The shipped
    /// configuration is under 9 KiB and 700 nodes, the largest manifest
    /// (Home Assistant's) 3 KiB, a board file 2 KiB; a shortcut has the most
    /// room (100 shortcuts, each up to 256 KiB, as before these limits).
    public static let shortcut = YAMLLimits(kind: "a shortcut file", maximumBytes: 256 * 1024, maximumNodes: 50_000, maximumDepth: 64)
    public static let configuration = YAMLLimits(kind: "a configuration file", maximumBytes: 256 * 1024, maximumNodes: 20_000, maximumDepth: 32)
    public static let manifest = YAMLLimits(kind: "an app manifest", maximumBytes: 256 * 1024, maximumNodes: 50_000, maximumDepth: 32)
    public static let board = YAMLLimits(kind: "a board file", maximumBytes: 64 * 1024, maximumNodes: 5_000, maximumDepth: 16)
}

extension YAMLDocument {
    /// The size refusal for `file` if it is larger than `limits` allow,
    /// checked from its size before it is read (nil when it fits or cannot
    /// be asked about: reading it then says what is wrong).
    public static func sizeError(file: String, limits: YAMLLimits) -> YAMLError? {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int else { return nil }
        return sizeError(bytes: size, file: file, limits: limits)
    }

    static func sizeError(bytes: Int, file: String, limits: YAMLLimits) -> YAMLError? {
        guard bytes > limits.maximumBytes else { return nil }
        return YAMLError(
            .refused("is \(bytes) bytes; \(limits.kind) may have at most \(limits.maximumBytes)"),
            at: YAMLLocation(file: file, line: 1, column: 1), path: "")
    }

    /// Walks libyaml's events before anything is composed, refusing at the
    /// first anchor or alias (an alias multiplies what it names: nested, a
    /// few lines cost exponential time and memory, and Parley's files have
    /// no use for them) and the first node past `limits`. Linear in the text,
    /// constant in memory. A syntax error stops the walk quietly: composing
    /// reports it, in the words it always has.
    static func refuseAliasesAndExcess(_ text: String, file: String, limits: YAMLLimits) throws(YAMLError) {
        func refused(_ why: String, _ mark: yaml_mark_t) -> YAMLError {
            YAMLError(.refused(why), at: YAMLLocation(file: file, line: mark.line + 1, column: mark.column + 1), path: "")
        }
        func name(_ anchor: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            anchor.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return }
        defer { yaml_parser_delete(&parser) }
        var bytes = Array(text.utf8)
        var nodes = 0
        var depth = 0
        try bytes.withUnsafeMutableBufferPointer { (buffer) throws(YAMLError) in
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                let anchor: String?
                switch event.type {
                case YAML_STREAM_END_EVENT: return
                case YAML_ALIAS_EVENT:
                    let alias = name(event.data.alias.anchor) ?? ""
                    throw refused(
                        "an alias (*\(alias)) is not accepted in \(limits.kind); write the value out in full",
                        event.start_mark)
                case YAML_SCALAR_EVENT: anchor = name(event.data.scalar.anchor)
                case YAML_SEQUENCE_START_EVENT: anchor = name(event.data.sequence_start.anchor); depth += 1
                case YAML_MAPPING_START_EVENT: anchor = name(event.data.mapping_start.anchor); depth += 1
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT: depth -= 1; continue
                default: continue
                }
                if let anchor {
                    throw refused(
                        "an anchor (&\(anchor)) is not accepted in \(limits.kind); write the value out in full",
                        event.start_mark)
                }
                nodes += 1
                if nodes > limits.maximumNodes {
                    throw refused("more than \(limits.maximumNodes) values; \(limits.kind) may have at most that many", event.start_mark)
                }
                if depth > limits.maximumDepth {
                    throw refused("nested more than \(limits.maximumDepth) deep; \(limits.kind) may nest at most that deep", event.start_mark)
                }
            }
        }
    }
}
