import Foundation
import ParleyExternal

/// The `satellite` object of `info`: what Home Assistant shows and asks of
/// the satellite.
public struct WyomingSatelliteInfo: Sendable, Hashable {
    public var name: String
    public var area: String?
    /// Parley ends utterances itself (its endpointer).
    public var hasVAD = true
    public var activeWakeWords: [String]
    public var maxActiveWakeWords = 1
    /// No remote trigger: the wake word and the button start a command.
    public var supportsTrigger = false

    public init(name: String, area: String? = nil, activeWakeWords: [String]) {
        self.name = name
        self.area = area
        self.activeWakeWords = activeWakeWords
    }
}

/// One intent-handling program of `info` (role 2): Parley's engine.
public struct WyomingHandleProgram: Sendable, Hashable {
    public var name: String
    public var languages: [String]

    public init(name: String, languages: [String] = ["en"]) {
        self.name = name
        self.languages = languages
    }
}

/// `info`, the answer to `describe`. The Python package reads every program
/// as an artifact with name, attribution, installed, description and
/// version, so all of them are always sent.
public struct WyomingInfo: Sendable, Hashable {
    public var satellite: WyomingSatelliteInfo?
    public var handle: [WyomingHandleProgram] = []
    public var version = WyomingEncoder.version

    public init(satellite: WyomingSatelliteInfo? = nil, handle: [WyomingHandleProgram] = []) {
        self.satellite = satellite
        self.handle = handle
    }

    static let attribution: JSONValue = .object(["name": .string("Parley"), "url": .string("https://parley.invalid/")])

    func artifact(_ name: String, _ description: String) -> [String: JSONValue] {
        ["name": .string(name), "attribution": Self.attribution, "installed": .bool(true),
         "description": .string(description), "version": .string(version)]
    }

    var data: [String: JSONValue] {
        var data: [String: JSONValue] = [:]
        for kind in ["asr", "tts", "intent", "wake", "mic", "snd"] { data[kind] = .array([]) }
        data["handle"] = .array(handle.map { program in
            var entry = artifact(program.name, "Parley's apps and shortcuts, run on the device")
            var model = artifact(program.name, "Parley's phrase model")
            model["languages"] = .array(program.languages.map(JSONValue.string))
            entry["models"] = .array([.object(model)])
            entry["supports_handled_streaming"] = .bool(false)
            entry["supports_home_control"] = .bool(false)
            return .object(entry)
        })
        if let satellite {
            var entry = artifact(satellite.name, "Parley: answers its own shortcuts on the device, the rest through Home Assistant")
            entry["area"] = satellite.area.map(JSONValue.string) ?? .null
            entry["has_vad"] = .bool(satellite.hasVAD)
            entry["active_wake_words"] = .array(satellite.activeWakeWords.map(JSONValue.string))
            entry["max_active_wake_words"] = .number(Double(satellite.maxActiveWakeWords))
            entry["supports_trigger"] = .bool(satellite.supportsTrigger)
            data["satellite"] = .object(entry)
        }
        return data
    }

    init(_ fields: Fields) throws(WyomingProtocolError) {
        if case .object(let object)? = fields.data["satellite"] {
            let satellite = Fields(type: "info.satellite", data: object)
            var info = WyomingSatelliteInfo(name: try satellite.string("name"), area: try satellite.optionalString("area"),
                                            activeWakeWords: (object["active_wake_words"]?.array ?? []).compactMap(\.string))
            info.hasVAD = try satellite.optionalBool("has_vad") ?? false
            info.supportsTrigger = try satellite.optionalBool("supports_trigger") ?? false
            self.satellite = info
        }
        for entry in fields.data["handle"]?.array ?? [] {
            guard case .object(let object) = entry else {
                throw WyomingProtocolError("a \"handle\" program of \"info\" is \(entry.kindName); expected an object")
            }
            let program = Fields(type: "info.handle", data: object)
            let languages = (object["models"]?.array ?? []).flatMap { ($0["languages"]?.array ?? []).compactMap(\.string) }
            handle.append(WyomingHandleProgram(name: try program.string("name"), languages: languages))
        }
    }
}
