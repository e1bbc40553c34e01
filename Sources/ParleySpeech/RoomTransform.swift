import CPocketSphinx
import Foundation
import Synchronization

/// The speaker-and-room MLLR transform `parley adapt` computed from this
/// household's confirmed commands. Setting it in a ``Slot`` swaps it into
/// every running command and dictation decoder that follows that slot at its
/// next utterance (ps_update_mllr), so the daemon adapts without a restart;
/// decoders made later pick it up the same way.
///
/// A transform is a linear map of one model's Gaussian means: it is applied
/// only by decoders whose acoustic model is the one it was estimated on,
/// and never by the wake detector (its thresholds were tuned on the
/// unadapted scores; it follows no slot, ``DecoderSettings/room``).
public enum RoomTransform {
    /// One household's transform, shared by the decoders of one daemon
    /// (``DecoderSettings/room``). A slot, not a process-wide value: two
    /// daemons in one process (the tests) must not adapt each other's
    /// decoders, and a decoder nobody gave a slot decodes on the model alone.
    public final class Slot: Sendable, Hashable {
        private let state = Mutex(State())

        public init() {}

        public var current: State { state.withLock { $0 } }

        /// Puts `file` (estimated on `model`) in use; nil removes the transform.
        public func use(_ file: String?, model: String?) {
            state.withLock { s in
                s.generation += 1
                s.file = file
                s.model = file == nil ? nil : model.map(RoomTransform.canonical)
            }
        }

        public static func == (a: Slot, b: Slot) -> Bool { a === b }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    public struct State: Sendable, Equatable {
        /// Bumped at every change, so a decoder applies each change once.
        public var generation = 0
        /// The mllr_solve output in use, nil when none (forgotten or never made).
        public var file: String?
        /// The acoustic model folder `file` was estimated on.
        public var model: String?
    }

    static func canonical(_ folder: String) -> String {
        URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The transform that changes nothing: a decoder that applied one goes
    /// back to its model's own means with it (ps_update_mllr re-reads the
    /// means before transforming; there is no call to drop a transform).
    /// One class; per feature stream A = I, b = 0, variance scale 1, in
    /// mllr_solve's layout.
    public static func identityText(streamLengths: [Int]) -> String {
        var lines = ["1", "\(streamLengths.count)"]
        for length in streamLengths {
            lines.append("\(length)")
            for row in 0..<length {
                lines.append((0..<length).map { $0 == row ? "1.0" : "0.0" }.joined(separator: " "))
            }
            lines.append(Array(repeating: "0.0", count: length).joined(separator: " "))
            lines.append(Array(repeating: "1.0", count: length).joined(separator: " "))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The feature streams of a model, from its feat.params: `-svspec`
    /// ("0-12/13-25/26-38": three of 13) or one stream of the whole vector
    /// (13 cepstra with deltas and double deltas).
    public static func streamLengths(model: String) -> [Int] {
        let text = (try? String(contentsOfFile: (model as NSString).appendingPathComponent("feat.params"), encoding: .utf8)) ?? ""
        let fields = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let at = fields.firstIndex(of: "-svspec"), at + 1 < fields.count else { return [39] }
        return fields[at + 1].split(separator: "/").map { group in
            group.split(separator: ",").reduce(0) { count, part in
                let bounds = part.split(separator: "-").compactMap { Int($0) }
                return count + (bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1)
            }
        }
    }

    private static let identities = Mutex<[String: String]>([:])

    /// An identity transform for `model`'s streams, written once per process.
    static func identityFile(for model: String) -> String? {
        identities.withLock { files in
            if let file = files[model] { return file }
            let file = FileManager.default.temporaryDirectory
                .appendingPathComponent("parley-\(getpid())-identity-\(files.count).mllr")
            guard (try? identityText(streamLengths: streamLengths(model: model)).write(to: file, atomically: true, encoding: .utf8)) != nil
            else { return nil }
            files[model] = file.path
            return file.path
        }
    }
}

extension SphinxDecoder {
    /// Applies a room transform set since this decoder last looked (called
    /// at the start of every utterance; a lock and a compare when nothing
    /// changed). Returns an error text when the transform could not be read:
    /// the decoder then keeps what it had.
    @discardableResult
    func followRoomTransform() -> String? {
        guard let slot = settings.room else { return nil }
        let room = slot.current
        guard room.generation != roomGeneration else { return nil }
        roomGeneration = room.generation
        let mine = RoomTransform.canonical(settings.acousticModel)
        let path: String
        if let file = room.file, room.model == mine {
            path = file
        } else if roomTransformApplied, let identity = RoomTransform.identityFile(for: mine) {
            path = identity
        } else {
            return nil
        }
        guard let mllr = ps_mllr_read(path) else {
            return "room transform \(path): not an MLLR transform file"
        }
        // The decoder takes ownership of the transform.
        _ = ps_update_mllr(ps, mllr)
        roomTransformApplied = path == room.file
        return nil
    }
}
