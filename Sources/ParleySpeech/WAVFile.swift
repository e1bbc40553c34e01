import Foundation

/// 16 kHz, 16-bit, mono PCM audio: the only format the recogniser accepts.
public struct PCMAudio: Sendable, Equatable {
    public static let sampleRate = 16_000
    public var samples: [Int16]
    public init(samples: [Int16]) { self.samples = samples }
    public var seconds: Double { Double(samples.count) / Double(Self.sampleRate) }
}

/// Minimal RIFF/WAVE reader and writer for 16-bit PCM mono at 16 kHz.
/// (ParleyAudio has the general reader; this one keeps ParleySpeech's
/// evaluation independent of the capture stack.)
public enum WAVFile {
    public static func read(_ url: URL) throws -> PCMAudio {
        let path = url.path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SpeechError.badFile(path: path, reason: "cannot be read")
        }
        return try decode(data, path: path)
    }

    public static func decode(_ data: Data, path: String) throws -> PCMAudio {
        let bytes = [UInt8](data)
        func u32(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 }
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw SpeechError.badFile(path: path, reason: "not a RIFF/WAVE file")
        }
        var offset = 12
        var format: (channels: Int, rate: Int, bits: Int, tag: Int)?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else {
                    throw SpeechError.badFile(path: path, reason: "truncated fmt chunk")
                }
                format = (u16(body + 2), u32(body + 4), u16(body + 14), u16(body))
            } else if id == "data" {
                guard let f = format else { throw SpeechError.badFile(path: path, reason: "data chunk before fmt chunk") }
                guard f.tag == 1 || f.tag == 0xFFFE, f.bits == 16, f.channels == 1, f.rate == PCMAudio.sampleRate else {
                    throw SpeechError.badFile(
                        path: path,
                        reason: "format \(f.channels) channel(s), \(f.rate) Hz, \(f.bits) bit; expected mono 16000 Hz 16-bit PCM")
                }
                let end = min(bytes.count, body + size)
                let count = (end - body) / 2
                var samples = [Int16](repeating: 0, count: count)
                samples.withUnsafeMutableBytes { dst in
                    bytes.withUnsafeBytes { src in
                        dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[body..<body + count * 2]))
                    }
                }
                return PCMAudio(samples: samples.map { Int16(littleEndian: $0) })
            }
            offset = body + size + (size & 1)
        }
        throw SpeechError.badFile(path: path, reason: "no data chunk")
    }

    public static func encode(_ audio: PCMAudio) -> Data {
        var data = Data()
        func put32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func put16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        let bytes = audio.samples.count * 2
        data.append(contentsOf: Array("RIFF".utf8)); put32(36 + bytes)
        data.append(contentsOf: Array("WAVEfmt ".utf8)); put32(16)
        put16(1); put16(1); put32(PCMAudio.sampleRate); put32(PCMAudio.sampleRate * 2); put16(2); put16(16)
        data.append(contentsOf: Array("data".utf8)); put32(bytes)
        audio.samples.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }
}
