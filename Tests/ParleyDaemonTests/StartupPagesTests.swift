import Foundation
import Glibc
import ParleyTestKit
import Testing

@testable import ParleyDaemon

/// Which mappings parleyd hands back after start-up, and that handing them
/// back works on a live process (this one).
/// One test at a time: `thisProcessReleasesItsCleanFileMappings` unmaps
/// every clean file mapping of the test process, the other test's file
/// included, which then read 0 KiB resident where it had just read 256.
@Suite(.serialized) struct StartupPagesTests {
    static let smaps = """
        562d34060000-562d34062000 r-xp 00002000 fe:00 254163                     /usr/bin/parleyd
        Size:                 24 kB
        Rss:                  24 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        VmFlags: rd ex mr mw me
        562d34062000-562d34063000 r--p 00008000 fe:00 254163                     /usr/bin/parleyd
        Rss:                   4 kB
        Private_Dirty:         4 kB
        Anonymous:             4 kB
        562d34063000-562d34064000 rw-p 00009000 fe:00 254163                     /usr/bin/parleyd
        Rss:                   4 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        7f0000000000-7f0000300000 r--s 00000000 fe:00 1200                       /usr/share/pocketsphinx/model/en-us/en-us/mdef
        Rss:                2892 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        7f0000400000-7f0000401000 r--p 00000000 fe:00 1300                       /usr/share/parley/model dir/feat.params
        Rss:                   0 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        7f0000500000-7f0000600000 rw-p 00000000 00:00 0                          [heap]
        Rss:                 512 kB
        Private_Dirty:       512 kB
        Anonymous:           512 kB
        7f0000700000-7f0000701000 r--s 00000000 00:05 77                         /dev/snd/pcmC0D0c
        Rss:                   4 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
        Rss:                   8 kB
        Private_Dirty:         0 kB
        Anonymous:             0 kB
        """

    @Test func onlyCleanPagesOfFilesTheProcessCannotWriteAreHandedBack() {
        let all = StartupPages.mappings(smaps: Self.smaps)
        #expect(all.count == 8)
        #expect(all[4].path == "/usr/share/parley/model dir/feat.params", "a path with a space is kept whole")
        #expect(all[3].residentKiB == 2_892 && all[1].privateDirtyKiB == 4)
        let chosen = all.filter(\.isCleanFile).map(\.path)
        // The code and the model index; not relocated data (dirty), not
        // writable data, not what is not resident, not the heap, a device
        // or the vDSO.
        #expect(chosen == ["/usr/bin/parleyd", "/usr/share/pocketsphinx/model/en-us/en-us/mdef"])
        #expect(all[0].start == 0x562d_3406_0000 && all[0].end == 0x562d_3406_2000)
    }

    /// A file this test maps read-only and reads: its pages are resident
    /// and clean, and released they leave the resident set; read again, the
    /// content is the file's.
    @Test func aCleanFileMappingLeavesTheResidentSetAndReadsTheSameAfter() throws {
        let dir = try TemporaryDirectory(); defer { dir.remove() }
        let path = dir.file("model.bin")
        let bytes = (0..<(256 * 1_024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        let base = try #require(mmap(nil, bytes.count, PROT_READ, MAP_PRIVATE, fd, 0))
        #expect(base != MAP_FAILED)
        defer { munmap(base, bytes.count) }
        let view = base.assumingMemoryBound(to: UInt8.self)
        var sum = 0
        for page in stride(from: 0, to: bytes.count, by: 4_096) { sum &+= Int(view[page]) }  // every page read
        func mine() throws -> StartupPages.Mapping {
            let all = StartupPages.mappings(smaps: try #require(StartupPages.procFile("smaps")))
            return try #require(all.first { $0.path == path })
        }
        let before = try mine()
        #expect(before.residentKiB == 256 && before.isCleanFile, "\(before)")
        let (advised, failures) = StartupPages.release([before])
        #expect(advised == 1 && failures == 0)
        #expect(try mine().residentKiB == 0, "released pages are no longer mapped")
        #expect(zip(bytes.indices, bytes).allSatisfy { view[$0.0] == $0.1 }, "read again, the content is the file's")
        #expect(try mine().residentKiB == 256)
        #expect(sum > 0)
    }

    @Test func thisProcessReleasesItsCleanFileMappings() throws {
        let released = try #require(StartupPages.release())
        #expect(released.mappings > 0, "a running test process maps its own code")
        #expect(released.cleanFileKiBBefore > 0)
    }
}
