import Foundation
import Glibc

/// Stops holding the pages of code and read-only files that only start-up
/// touched.
///
/// Starting parleyd runs code that idle listening never runs again: argument
/// parsing, the configuration's YAML, the database's migrations, the web
/// and socket servers' set-up, the grammar compiler, and much of Foundation
/// and the Swift runtime with them; and each PocketSphinx decoder reads all
/// of the acoustic model's index (mdef) through its own mapping. Those pages
/// stay mapped, and counted as parleyd's resident memory, for as long as it
/// runs: of 75 MiB resident in named mode, 51 MiB were clean pages of files
/// and 23 MiB the process's own memory (BENCHMARKS.md, "Idle memory").
///
/// Once the decoders are loaded, before capture starts, every mapping of a
/// file that the process cannot write and has not changed is unmapped page
/// by page (`madvise(MADV_DONTNEED)`): the pages leave parleyd's resident
/// set and stay in the page cache, where the kernel drops them first when
/// memory runs short; what listening uses is mapped again on first use, from
/// the cache, without reading the card. Nothing can be lost: a mapping with
/// any page of its own (written, copied on write) is left alone, and a clean
/// page of a file is the file's content. (`MADV_PAGEOUT`, which would also
/// evict them from the cache, does nothing for files the process does not
/// own, as parleyd running as the `parley` user does not own its binary,
/// libraries and models.)
enum StartupPages {
    /// One mapping of /proc/self/smaps, with what decides whether it is advised out.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var permissions: String
        var inode: UInt64
        var path: String
        /// Resident and privately modified (relocated, copied on write), in KiB.
        var residentKiB = 0
        var privateDirtyKiB = 0
        var anonymousKiB = 0

        /// A file's pages the process neither can write nor has changed.
        var isCleanFile: Bool {
            inode != 0 && path.hasPrefix("/") && !path.hasPrefix("/dev/") && !permissions.contains("w")
                && privateDirtyKiB == 0 && anonymousKiB == 0 && residentKiB > 0
        }
    }

    /// The mappings of an smaps text, in order.
    static func mappings(smaps: String) -> [Mapping] {
        var result: [Mapping] = []
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":"), fields.count >= 5 {
                let bounds = first.split(separator: "-")
                guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                      let inode = UInt64(fields[4])
                else { continue }
                let path = fields.count > 5 ? fields[5...].joined(separator: " ") : ""
                result.append(Mapping(start: start, end: end, permissions: String(fields[1]), inode: inode, path: path))
            } else if !result.isEmpty, fields.count >= 2, let kib = Int(fields[1]) {
                switch fields[0] {
                case "Rss:": result[result.count - 1].residentKiB = kib
                case "Private_Dirty:": result[result.count - 1].privateDirtyKiB = kib
                case "Anonymous:": result[result.count - 1].anonymousKiB = kib
                default: break
                }
            }
        }
        return result
    }

    /// What `release` did: mappings advised out (and refused), and the
    /// resident KiB of clean file pages just before and just after (pages
    /// read back meanwhile included). Summed from smaps, not VmRSS: the
    /// kernel's per-process counters are per-CPU and lag behind a reclaim
    /// this size.
    struct Released: Equatable {
        var mappings: Int
        var failures: Int
        var cleanFileKiBBefore: Int
        var cleanFileKiBAfter: Int
    }

    /// Unmaps the pages of every clean file mapping of this process; nil
    /// when /proc/self/smaps cannot be read.
    static func release() -> Released? {
        guard let before = procFile("smaps") else { return nil }
        let clean = mappings(smaps: before).filter(\.isCleanFile)
        let (advised, failures) = release(clean)
        let after = procFile("smaps").map { mappings(smaps: $0).filter(\.isCleanFile) } ?? []
        return Released(mappings: advised, failures: failures,
                        cleanFileKiBBefore: clean.reduce(0) { $0 + $1.residentKiB },
                        cleanFileKiBAfter: after.reduce(0) { $0 + $1.residentKiB })
    }

    /// `madvise(MADV_DONTNEED)` on each of `mappings` (read from smaps just
    /// before: clean, not writable); how many were advised and how many
    /// refused (a mapping gone meanwhile).
    static func release(_ mappings: [Mapping]) -> (advised: Int, failures: Int) {
        var advised = 0, failures = 0
        for mapping in mappings where mapping.isCleanFile {
            if madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 {
                advised += 1
            } else {
                failures += 1
            }
        }
        return (advised, failures)
    }

    /// /proc/self/`name` whole. (`String(contentsOfFile:)` stops after the
    /// first read of a proc file, whose size is given as 0: 4 KiB of smaps.)
    static func procFile(_ name: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/" + name) else { return nil }
        defer { try? handle.close() }
        // Decoded leniently: a mapped path need not be UTF-8.
        return (try? handle.readToEnd()).flatMap { $0.map { String(decoding: $0, as: UTF8.self) } }
    }
}
