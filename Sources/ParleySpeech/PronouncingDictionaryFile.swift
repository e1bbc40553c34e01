import Foundation
import Glibc

/// A cmudict-format file ("word PHONE PHONE…", variants as "word(2)")
/// looked up in place: only a sorted index of (word hash, line offset) is
/// kept on the heap, about 1 MiB for the 135,000 lines of the en-us
/// dictionary where a parsed `[String: [[String]]]` took some 30 MiB of the
/// daemon's resident memory (BENCHMARKS.md, "Idle listening"). The file is
/// mapped only while it is indexed; a lookup reads its few lines with
/// pread(2) from the page cache (a mapping kept for lookups became resident
/// almost whole: every fault maps the pages around it too).
final class PronouncingDictionaryFile: @unchecked Sendable {
    let path: String
    private let fd: Int32
    private let size: Int
    /// hash32 << 32 | line offset, sorted: the lines of one word are adjacent
    /// and in file order (its variants in the order the file gives them).
    private let index: [UInt64]

    /// Maps and indexes the file; a line without phones is an error naming it.
    init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SpeechError.badFile(path: path, reason: "pronouncing dictionary cannot be read") }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size < Int(UInt32.max) else {
            close(fd)
            throw SpeechError.badFile(path: path, reason: "pronouncing dictionary cannot be read (empty or over 4 GiB)")
        }
        size = Int(info.st_size)
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            close(fd)
            throw SpeechError.badFile(path: path, reason: "pronouncing dictionary cannot be mapped (errno \(errno))")
        }
        let built = Result { try Self.buildIndex(UnsafeRawBufferPointer(start: mapped, count: Int(info.st_size)), path: path) }
        munmap(mapped, Int(info.st_size))
        switch built {
        case .success(let index): self.index = index
        case .failure(let error):
            close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The line starting at `offset` (without its newline), read with pread(2).
    private func line(at offset: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 256)
        var filled = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { raw in
                pread(fd, raw.baseAddress! + filled, raw.count - filled, off_t(offset + filled))
            }
            if got <= 0 { break }
            if let newline = buffer[filled..<(filled + got)].firstIndex(of: Self.newline) {
                return Array(buffer[..<newline])
            }
            filled += got
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
        }
        return Array(buffer[..<filled])
    }

    private static let space = UInt8(ascii: " "), newline = UInt8(ascii: "\n"), paren = UInt8(ascii: "(")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// FNV-1a over the word's bytes, folded to 32 bits.
    static func hash<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }

    private static func buildIndex(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [UInt64] {
        var index: [UInt64] = []
        index.reserveCapacity(bytes.count / 24)
        var lineStart = 0
        var number = 0
        while lineStart < bytes.count {
            number += 1
            var end = lineStart
            while end < bytes.count && bytes[end] != newline { end += 1 }
            if end > lineStart {
                let word = wordRange(bytes, line: lineStart..<end)
                guard let word else {
                    throw SpeechError.badFile(path: path, reason: "line \(number): expected 'word PHONE...'")
                }
                let h = hash(UnsafeRawBufferPointer(rebasing: bytes[word]))
                index.append(UInt64(h) << 32 | UInt64(lineStart))
            }
            lineStart = end + 1
        }
        index.sort()
        return index
    }

    /// The word of a line (without a "(2)" variant mark), nil when the line has no phones.
    private static func wordRange(_ bytes: UnsafeRawBufferPointer, line: Range<Int>) -> Range<Int>? {
        var i = line.lowerBound
        while i < line.upperBound && bytes[i] != space && bytes[i] != paren { i += 1 }
        let word = line.lowerBound..<i
        while i < line.upperBound && bytes[i] != space { i += 1 }
        // At least one phone after the space.
        var j = i
        while j < line.upperBound && (bytes[j] == space || bytes[j] == carriageReturn) { j += 1 }
        return word.isEmpty || j >= line.upperBound ? nil : word
    }

    /// Every pronunciation of `word` in file order; nil when the file has none.
    func pronunciations(of word: String) -> [[String]]? {
        let key = Array(word.utf8)
        let h = UInt64(Self.hash(key)) << 32
        var low = 0, high = index.count
        while low < high {
            let mid = (low + high) / 2
            if index[mid] < h { low = mid + 1 } else { high = mid }
        }
        var result: [[String]] = []
        var k = low
        while k < index.count && index[k] & 0xffff_ffff_0000_0000 == h {
            let text = line(at: Int(index[k] & 0xffff_ffff))
            k += 1
            let matched: [String]? = text.withUnsafeBytes { bytes in
                guard let range = Self.wordRange(bytes, line: 0..<bytes.count),
                      range.count == key.count, zip(bytes[range], key).allSatisfy({ $0 == $1 }) else { return nil }
                var i = range.upperBound
                while i < bytes.count && bytes[i] != Self.space { i += 1 }
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i...]), as: UTF8.self)
                    .split(whereSeparator: { $0 == " " || $0 == "\r" }).map(String.init)
            }
            if let matched { result.append(matched) }
        }
        return result.isEmpty ? nil : result
    }
}
