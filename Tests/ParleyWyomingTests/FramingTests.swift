import Foundation
import ParleyExternal
import Testing

@testable import ParleyWyoming

/// Wyoming 1.9 framing: header line, data merged, payload; every length bounded.
@Suite struct FramingTests {
    func decodeAll(_ bytes: Data, limits: WyomingLimits = WyomingLimits(), piece: Int = .max) throws -> [WyomingFrame] {
        var decoder = WyomingDecoder(limits: limits)
        var frames: [WyomingFrame] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            decoder.append(bytes[offset..<end])
            offset = end
            while let frame = try decoder.next() { frames.append(frame) }
        }
        #expect(decoder.bufferedBytes == 0)
        return frames
    }

    @Test func everyEventRoundTripsWholeAndByteByByte() throws {
        let events: [WyomingEvent] = [
            .describe, .runSatellite, .pauseSatellite, .ping("x"), .pong(nil),
            .runPipeline(WyomingRunPipeline(startStage: .asr, endStage: .tts, restartOnEnd: false)),
            .runPipeline(WyomingRunPipeline(startStage: .tts, endStage: .tts, announceText: "Dinner is ready")),
            .detection(name: "hey_parley"), .audioStart(.microphone),
            .audioChunk(.microphone, Data([1, 0, 0xFF, 0x7F])), .audioStop,
            .transcript(text: "turn on the light", language: "en"), .synthesize(text: "Turned on."), .played,
            .error(text: "no pipeline", code: "stt-no-text-recognized"),
            .timerStarted(WyomingTimer(id: "t1", totalSeconds: 300, name: "pasta")),
            .timerUpdated(id: "t1", isActive: false, totalSeconds: 120), .timerCancelled(id: "t1"), .timerFinished(id: "t1"),
            .handled(text: "Done."), .notHandled(text: nil),
            .info(WyomingInfo(satellite: WyomingSatelliteInfo(name: "Kitchen", area: "Kitchen", activeWakeWords: ["hey parley"]),
                              handle: [WyomingHandleProgram(name: "parley")])),
        ]
        var bytes = Data()
        for event in events { bytes.append(WyomingEncoder.encode(event.frame)) }
        for piece in [Int.max, 1, 7] {
            let decoded = try decodeAll(bytes, piece: piece).map { try WyomingEvent(frame: $0) }
            #expect(decoded == events)
        }
    }

    @Test func dataAfterTheHeaderIsMergedIntoTheHeadersData() throws {
        let extra = Data(#"{"text":"hello","language":"en"}"#.utf8)
        var bytes = Data(#"{"type":"transcript","data":{"text":"old","context":{}},"data_length":\#(extra.count),"payload_length":3}"#.utf8)
        bytes.append(0x0A)
        bytes.append(extra)
        bytes.append(contentsOf: [9, 8, 7])
        let frames = try decodeAll(bytes)
        #expect(frames == [WyomingFrame(type: "transcript", data: ["text": .string("hello"), "language": .string("en"), "context": .object([:])],
                                        payload: Data([9, 8, 7]))])
    }

    @Test func unknownEventsOfOtherRolesAreKeptNotRefused() throws {
        let frame = try #require(try decodeAll(Data("{\"type\":\"streaming-started\"}\n".utf8)).first)
        #expect(try WyomingEvent(frame: frame) == .other(frame))
    }

    /// Each malformed input gets an error naming what was wrong and what was expected.
    @Test(arguments: [
        ("not json\n", "is not JSON"),
        ("[1,2]\n", "expected a JSON object"),
        ("{\"data\":{}}\n", "has no \"type\" string"),
        ("{\"type\":\"\"}\n", "has no \"type\" string"),
        ("{\"type\":\"ping\",\"data\":[1]}\n", "expected an object"),
        ("{\"type\":\"ping\",\"data_length\":-1}\n", "expected a whole number of bytes"),
        ("{\"type\":\"ping\",\"data_length\":1.5}\n", "expected a whole number of bytes"),
        ("{\"type\":\"ping\",\"payload_length\":\"4\"}\n", "expected a whole number of bytes"),
        ("{\"type\":\"audio-chunk\",\"payload_length\":99999999}\n", "payload_length of \"audio-chunk\" is 99999999 bytes; at most 524288"),
        ("{\"type\":\"info\",\"data_length\":99999999}\n", "data_length of \"info\" is 99999999 bytes; at most 262144"),
        ("{\"type\":\"ping\",\"data_length\":3}\nabc", "the 3 bytes of data of \"ping\" is not JSON"),
    ])
    func malformedFramesAreRefusedWithAReason(input: String, expected: String) throws {
        let error = #expect(throws: WyomingProtocolError.self) { try decodeAll(Data(input.utf8)) }
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "no error")")
    }

    @Test func aHeaderLineWithoutEndIsRefusedAtTheBoundNotBuffered() throws {
        var limits = WyomingLimits()
        limits.headerBytes = 100
        var decoder = WyomingDecoder(limits: limits)
        decoder.append(Data(repeating: UInt8(ascii: "a"), count: 100))
        #expect(try decoder.next() == nil)
        decoder.append([UInt8(ascii: "a")])
        let error = #expect(throws: WyomingProtocolError.self) { try decoder.next() }
        #expect(error?.description.contains("longer than 100 bytes") == true)
        // A line at the bound is still read.
        var exact = WyomingDecoder(limits: limits)
        let line = "{\"type\":\"ping\",\"data\":{\"text\":\"" + String(repeating: "b", count: 100 - 34) + "\"}}"
        #expect(line.utf8.count == 100)
        exact.append(Data((line + "\n").utf8))
        #expect(try exact.next()?.type == "ping")
    }

    @Test(arguments: [
        ("{\"type\":\"transcript\"}\n", "\"transcript\" has no \"text\"; expected a string"),
        ("{\"type\":\"transcript\",\"data\":{\"text\":5}}\n", "\"text\" of \"transcript\" is a number; expected a string"),
        ("{\"type\":\"run-pipeline\",\"data\":{\"start_stage\":\"asr\",\"end_stage\":\"dance\"}}\n", "\"end_stage\" of \"run-pipeline\" is \"dance\"; expected one of wake, asr"),
        ("{\"type\":\"audio-chunk\",\"data\":{\"rate\":16000,\"width\":9,\"channels\":1}}\n", "expected 1000-48000 Hz, 1-2 bytes, 1-2 channels"),
        ("{\"type\":\"audio-start\",\"data\":{\"rate\":16000,\"channels\":1}}\n", "\"width\" of \"audio-start\" is missing; expected a whole number"),
        ("{\"type\":\"timer-started\",\"data\":{\"id\":\"a\",\"total_seconds\":\"ten\"}}\n", "\"total_seconds\" of \"timer-started\" is ten"),
    ])
    func eventsMissingWhatTheyCarryAreRefused(input: String, expected: String) throws {
        let frame = try #require(try decodeAll(Data(input.utf8)).first)
        let error = #expect(throws: WyomingProtocolError.self) { try WyomingEvent(frame: frame) }
        #expect(error?.description.contains(expected) == true, "\(error?.description ?? "no error")")
    }

    @Test func theHeaderCarriesTheVersionAndLengthsAsThePythonPackageWritesThem() throws {
        let bytes = WyomingEncoder.encode(WyomingEvent.audioChunk(.microphone, Data(count: 4)).frame)
        let newline = try #require(bytes.firstIndex(of: 0x0A))
        let header = try JSONDecoder().decode(JSONValue.self, from: bytes[..<newline])
        #expect(header["type"] == .string("audio-chunk"))
        #expect(header["version"] == .string("1.9.0"))
        #expect(header["payload_length"] == .number(4))
        #expect(header["data"] == nil)
        let dataLength = try #require(header["data_length"].flatMap { if case .number(let n) = $0 { Int(n) } else { nil } })
        #expect(bytes.count == newline + 1 + dataLength + 4)
    }
}

/// Bytes written by the real `wyoming` package (the fuzz seeds were made
/// with its write_event): Parley reads them as the events they are.
@Suite struct PythonWrittenBytesTests {
    static func seed(_ name: String) throws -> Data {
        try Data(contentsOf: SharedDataRoot.fuzz.appendingPathComponent("corpus/wyoming/\(name)"))
    }

    @Test func aHomeAssistantSessionDecodes() throws {
        var decoder = WyomingDecoder()
        decoder.append(try Self.seed("ha-satellite-session.bin"))
        var events: [WyomingEvent] = []
        while let frame = try decoder.next() { events.append(try WyomingEvent(frame: frame)) }
        #expect(events.count == 14)
        #expect(events.first == .runSatellite)
        #expect(events[3] == .transcript(text: "turn on the light", language: nil))
        #expect(events[6] == .audioChunk(WyomingAudioFormat(rate: 22_050), Data(0..<64)))
        #expect(events[9] == .timerStarted(WyomingTimer(id: "t", totalSeconds: 60, name: "tea")))
        #expect(events.last == .error(text: "no text recognized", code: "stt-no-text-recognized"))
    }

    @Test func theInfoOfASatelliteAndAHandlerDecodes() throws {
        var decoder = WyomingDecoder()
        decoder.append(try Self.seed("info.bin"))
        guard case .info(let info)? = try decoder.next().map({ try WyomingEvent(frame: $0) }) else {
            Issue.record("no info"); return
        }
        #expect(info.satellite?.area == "Kitchen")
        #expect(info.satellite?.activeWakeWords == ["hey parley"])
        #expect(info.satellite?.hasVAD == true)
        #expect(info.handle == [WyomingHandleProgram(name: "parley", languages: ["en"])])
    }
}

enum SharedDataRoot {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")
}
