import Foundation
import ParleyExternal

/// PCM format of an audio stream (`rate`, `width` in bytes, `channels`).
public struct WyomingAudioFormat: Sendable, Hashable {
    public var rate: Int
    public var width: Int
    public var channels: Int

    public init(rate: Int, width: Int = 2, channels: Int = 1) {
        self.rate = rate
        self.width = width
        self.channels = channels
    }

    /// What Parley's microphone gives: 16 kHz, 16-bit mono.
    public static let microphone = WyomingAudioFormat(rate: 16_000)

    /// The most a peer's audio may be: the speaker plays 16-bit mono, and
    /// Home Assistant's voices are 16-bit at 16 to 48 kHz. A format is what
    /// the satellite sizes its answer buffer from, so a larger one (192 kHz,
    /// 32-bit, 8 channels was accepted, 350 MiB for a minute) is refused.
    public static let maximumRate = 48_000
    public static let maximumWidth = 2
    public static let maximumChannels = 2

    /// Bytes of one second of audio in this format.
    public var bytesPerSecond: Int { rate * width * channels }
}

/// Stages of a Home Assistant pipeline.
public enum WyomingPipelineStage: String, Sendable, Hashable, CaseIterable {
    case wake, asr, intent, handle, tts
}

/// `run-pipeline`: the satellite asks for a pipeline run; `announce_text`
/// with start stage tts is an announcement.
public struct WyomingRunPipeline: Sendable, Hashable {
    public var startStage: WyomingPipelineStage
    public var endStage: WyomingPipelineStage
    public var wakeWordName: String?
    public var restartOnEnd = false
    public var announceText: String?

    public init(startStage: WyomingPipelineStage, endStage: WyomingPipelineStage, wakeWordName: String? = nil,
                restartOnEnd: Bool = false, announceText: String? = nil) {
        self.startStage = startStage
        self.endStage = endStage
        self.wakeWordName = wakeWordName
        self.restartOnEnd = restartOnEnd
        self.announceText = announceText
    }
}

/// `timer-started`: a timer Home Assistant runs for this satellite.
public struct WyomingTimer: Sendable, Hashable {
    public var id: String
    public var totalSeconds: Int
    public var name: String?

    public init(id: String, totalSeconds: Int, name: String? = nil) {
        self.id = id
        self.totalSeconds = totalSeconds
        self.name = name
    }
}

/// Every event the satellite and handler roles send or receive. Events of
/// other roles (`transcribe`, `streaming-started`, …) arrive as `other` and
/// are ignored, as the protocol expects of a peer that does not know them.
public enum WyomingEvent: Sendable, Equatable {
    case describe
    case info(WyomingInfo)
    case runSatellite
    case pauseSatellite
    case ping(String?)
    case pong(String?)
    case runPipeline(WyomingRunPipeline)
    case detection(name: String?)
    case audioStart(WyomingAudioFormat)
    case audioChunk(WyomingAudioFormat, Data)
    case audioStop
    case transcript(text: String, language: String?)
    case synthesize(text: String)
    case played
    case error(text: String, code: String?)
    case timerStarted(WyomingTimer)
    case timerUpdated(id: String, isActive: Bool, totalSeconds: Int)
    case timerCancelled(id: String)
    case timerFinished(id: String)
    case handled(text: String?)
    case notHandled(text: String?)
    case other(WyomingFrame)

    /// Reads a frame; a known event missing what it must carry is an error naming the field.
    public init(frame: WyomingFrame) throws(WyomingProtocolError) {
        let fields = Fields(type: frame.type, data: frame.data)
        switch frame.type {
        case "describe": self = .describe
        case "info": self = .info(try WyomingInfo(fields))
        case "run-satellite": self = .runSatellite
        case "pause-satellite": self = .pauseSatellite
        case "ping": self = .ping(try fields.optionalString("text"))
        case "pong": self = .pong(try fields.optionalString("text"))
        case "run-pipeline":
            self = .runPipeline(WyomingRunPipeline(
                startStage: try fields.stage("start_stage"), endStage: try fields.stage("end_stage"),
                wakeWordName: try fields.optionalString("wake_word_name"),
                restartOnEnd: try fields.optionalBool("restart_on_end") ?? false,
                announceText: try fields.optionalString("announce_text")))
        case "detection": self = .detection(name: try fields.optionalString("name"))
        case "audio-start": self = .audioStart(try fields.audioFormat())
        case "audio-chunk": self = .audioChunk(try fields.audioFormat(), frame.payload)
        case "audio-stop": self = .audioStop
        case "transcript": self = .transcript(text: try fields.string("text"), language: try fields.optionalString("language"))
        case "synthesize": self = .synthesize(text: try fields.string("text"))
        case "played": self = .played
        case "error": self = .error(text: try fields.string("text"), code: try fields.optionalString("code"))
        case "timer-started":
            self = .timerStarted(WyomingTimer(id: try fields.string("id"), totalSeconds: try fields.integer("total_seconds"),
                                              name: try fields.optionalString("name")))
        case "timer-updated":
            self = .timerUpdated(id: try fields.string("id"), isActive: try fields.optionalBool("is_active") ?? true,
                                 totalSeconds: try fields.integer("total_seconds"))
        case "timer-cancelled": self = .timerCancelled(id: try fields.string("id"))
        case "timer-finished": self = .timerFinished(id: try fields.string("id"))
        case "handled": self = .handled(text: try fields.optionalString("text"))
        case "not-handled": self = .notHandled(text: try fields.optionalString("text"))
        default: self = .other(frame)
        }
    }

    /// The frame this event is sent as.
    public var frame: WyomingFrame {
        func text(_ value: String?) -> [String: JSONValue] { value.map { ["text": .string($0)] } ?? [:] }
        switch self {
        case .describe: return WyomingFrame(type: "describe")
        case .info(let info): return WyomingFrame(type: "info", data: info.data)
        case .runSatellite: return WyomingFrame(type: "run-satellite")
        case .pauseSatellite: return WyomingFrame(type: "pause-satellite")
        case .ping(let value): return WyomingFrame(type: "ping", data: text(value))
        case .pong(let value): return WyomingFrame(type: "pong", data: text(value))
        case .runPipeline(let run):
            var data: [String: JSONValue] = [
                "start_stage": .string(run.startStage.rawValue), "end_stage": .string(run.endStage.rawValue),
                "restart_on_end": .bool(run.restartOnEnd),
            ]
            if let name = run.wakeWordName { data["wake_word_name"] = .string(name) }
            if let announce = run.announceText { data["announce_text"] = .string(announce) }
            return WyomingFrame(type: "run-pipeline", data: data)
        case .detection(let name): return WyomingFrame(type: "detection", data: name.map { ["name": .string($0)] } ?? [:])
        case .audioStart(let format): return WyomingFrame(type: "audio-start", data: Self.formatData(format))
        case .audioChunk(let format, let samples): return WyomingFrame(type: "audio-chunk", data: Self.formatData(format), payload: samples)
        case .audioStop: return WyomingFrame(type: "audio-stop")
        case .transcript(let value, let language):
            var data: [String: JSONValue] = ["text": .string(value)]
            if let language { data["language"] = .string(language) }
            return WyomingFrame(type: "transcript", data: data)
        case .synthesize(let value): return WyomingFrame(type: "synthesize", data: ["text": .string(value)])
        case .played: return WyomingFrame(type: "played")
        case .error(let value, let code):
            var data: [String: JSONValue] = ["text": .string(value)]
            if let code { data["code"] = .string(code) }
            return WyomingFrame(type: "error", data: data)
        case .timerStarted(let timer):
            var data: [String: JSONValue] = ["id": .string(timer.id), "total_seconds": .number(Double(timer.totalSeconds))]
            if let name = timer.name { data["name"] = .string(name) }
            return WyomingFrame(type: "timer-started", data: data)
        case .timerUpdated(let id, let isActive, let total):
            return WyomingFrame(type: "timer-updated", data: [
                "id": .string(id), "is_active": .bool(isActive), "total_seconds": .number(Double(total)),
            ])
        case .timerCancelled(let id): return WyomingFrame(type: "timer-cancelled", data: ["id": .string(id)])
        case .timerFinished(let id): return WyomingFrame(type: "timer-finished", data: ["id": .string(id)])
        case .handled(let value): return WyomingFrame(type: "handled", data: text(value))
        case .notHandled(let value): return WyomingFrame(type: "not-handled", data: text(value))
        case .other(let frame): return frame
        }
    }

    private static func formatData(_ format: WyomingAudioFormat) -> [String: JSONValue] {
        ["rate": .number(Double(format.rate)), "width": .number(Double(format.width)), "channels": .number(Double(format.channels))]
    }
}

/// Typed reads of an event's data; errors name the event and the field.
struct Fields {
    let type: String
    let data: [String: JSONValue]

    func string(_ key: String) throws(WyomingProtocolError) -> String {
        guard let value = try optionalString(key) else {
            throw WyomingProtocolError("\"\(type)\" has no \"\(key)\"; expected a string")
        }
        return value
    }

    func optionalString(_ key: String) throws(WyomingProtocolError) -> String? {
        switch data[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw WyomingProtocolError("\"\(key)\" of \"\(type)\" is \(other.kindName); expected a string")
        }
    }

    func optionalBool(_ key: String) throws(WyomingProtocolError) -> Bool? {
        switch data[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw WyomingProtocolError("\"\(key)\" of \"\(type)\" is \(other.kindName); expected true or false")
        }
    }

    func integer(_ key: String) throws(WyomingProtocolError) -> Int {
        guard case .number(let number)? = data[key], number == number.rounded(), abs(number) < 1e12 else {
            let found = data[key].map { $0.canonicalString ?? $0.kindName } ?? "missing"
            throw WyomingProtocolError("\"\(key)\" of \"\(type)\" is \(found); expected a whole number")
        }
        return Int(number)
    }

    func stage(_ key: String) throws(WyomingProtocolError) -> WyomingPipelineStage {
        let name = try string(key)
        guard let stage = WyomingPipelineStage(rawValue: name) else {
            let known = WyomingPipelineStage.allCases.map(\.rawValue).joined(separator: ", ")
            throw WyomingProtocolError("\"\(key)\" of \"\(type)\" is \"\(name)\"; expected one of \(known)")
        }
        return stage
    }

    /// rate 1–48 kHz, width 1–2 bytes, 1–2 channels (`WyomingAudioFormat`'s maximums).
    func audioFormat() throws(WyomingProtocolError) -> WyomingAudioFormat {
        let format = WyomingAudioFormat(rate: try integer("rate"), width: try integer("width"), channels: try integer("channels"))
        typealias Most = WyomingAudioFormat
        guard (1_000...Most.maximumRate).contains(format.rate), (1...Most.maximumWidth).contains(format.width),
              (1...Most.maximumChannels).contains(format.channels) else {
            throw WyomingProtocolError(
                "audio format of \"\(type)\" is \(format.rate) Hz, \(format.width) bytes, \(format.channels) channels; "
                    + "expected 1000-\(Most.maximumRate) Hz, 1-\(Most.maximumWidth) bytes, 1-\(Most.maximumChannels) channels")
        }
        return format
    }
}
