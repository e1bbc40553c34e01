import Foundation

/// Reads and writes 16-bit PCM WAV files (RIFF/WAVE, format 1 or extensible).
public enum WAVFile {
    /// Interleaved samples, the sample rate and the channel count.
    public struct Contents: Sendable, Equatable {
        public var samples: [Int16]
        public var sampleRate: Int
        public var channels: Int
    }

    /// Sample rates a file may declare (telephone 4 kHz to studio 192 kHz).
    public static let supportedRates = 4_000...192_000
    /// Channel counts a file may declare.
    public static let supportedChannels = 1...32

    /// Reads a mono 16-bit WAV file; throws `AudioError.badFile` naming the
    /// file and what was expected if it is anything else.
    public static func read(_ url: URL) throws -> (samples: [Int16], sampleRate: Int) {
        let contents = try readInterleaved(url)
        guard contents.channels == 1 else {
            throw AudioError.badFile(path: url.path, reason: "expected 1 channel, found \(contents.channels)")
        }
        return (contents.samples, contents.sampleRate)
    }

    /// Reads a 16-bit WAV file with any number of channels (samples interleaved).
    public static func readInterleaved(_ url: URL) throws -> Contents {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw AudioError.badFile(path: url.path, reason: "cannot read: \(error.localizedDescription)")
        }
        return try decode(data, path: url.path)
    }

    /// Reads the bytes of a 16-bit WAV file; `path` names it in errors.
    public static func decode(_ data: Data, path: String) throws -> Contents {
        func bad(_ reason: String) -> AudioError { .badFile(path: path, reason: reason) }
        guard data.count >= 12, data.prefix(4) == Data("RIFF".utf8), data[8..<12] == Data("WAVE".utf8) else {
            throw bad("not a RIFF/WAVE file")
        }
        func u16(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        var offset = 12
        var rate = 0, channels = 0, bits = 0, format = 0
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= data.count else { throw bad("fmt chunk too short (\(size) bytes)") }
                format = u16(body)
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
            } else if id == "data" {
                guard format == 1 || format == 0xFFFE else { throw bad("expected PCM (format 1), found format \(format)") }
                guard bits == 16 else { throw bad("expected 16-bit samples, found \(bits)-bit") }
                guard channels > 0, rate > 0 else { throw bad("data chunk before a valid fmt chunk") }
                // Bounds, not taste: resampling cost and memory grow with the
                // rate ratio, so an absurd rate in a header would stall the device.
                guard supportedRates.contains(rate) else {
                    throw bad("sample rate \(rate) Hz; expected \(supportedRates.lowerBound)-\(supportedRates.upperBound) Hz")
                }
                guard supportedChannels.contains(channels) else {
                    throw bad("\(channels) channels; expected \(supportedChannels.lowerBound)-\(supportedChannels.upperBound)")
                }
                let end = min(data.count, body + size)
                let count = (end - body) / 2
                var samples = [Int16](repeating: 0, count: count)
                samples.withUnsafeMutableBytes { out in
                    data.copyBytes(to: out.bindMemory(to: UInt8.self), from: body..<body + count * 2)
                }
                for i in samples.indices { samples[i] = Int16(littleEndian: samples[i]) }
                return Contents(samples: samples, sampleRate: rate, channels: channels)
            }
            offset = body + size + (size & 1)
        }
        throw bad("no data chunk")
    }

    /// The bytes of a 16-bit PCM WAV file.
    public static func encode(_ samples: [Int16], sampleRate: Int, channels: Int = 1) -> Data {
        var data = Data()
        func put32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func put16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        data.append(contentsOf: Array("RIFF".utf8)); put32(36 + samples.count * 2)
        data.append(contentsOf: Array("WAVEfmt ".utf8)); put32(16)
        put16(1); put16(channels); put32(sampleRate); put32(sampleRate * channels * 2); put16(channels * 2); put16(16)
        data.append(contentsOf: Array("data".utf8)); put32(samples.count * 2)
        samples.withUnsafeBytes { raw in
            for s in raw.bindMemory(to: Int16.self) { withUnsafeBytes(of: s.littleEndian) { data.append(contentsOf: $0) } }
        }
        return data
    }

    public static func write(_ samples: [Int16], sampleRate: Int, channels: Int = 1, to url: URL) throws {
        try encode(samples, sampleRate: sampleRate, channels: channels).write(to: url)
    }
}
