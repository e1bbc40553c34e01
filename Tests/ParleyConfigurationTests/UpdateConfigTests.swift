import Testing

@testable import ParleyConfiguration

/// parley.yaml's `update:` section (issue 52): no folder and 1 GiB uploads
/// by default, and every wrong value named with its line and key.
@Suite struct UpdateConfigTests {
    @Test func offByDefaultAndReadWhenSet() throws {
        #expect(ParleyConfig().update.folder == nil)
        #expect(ParleyConfig().update.maxUploadBytes == 1 << 30)
        let config = try ConfigLoader.parse("update:\n  folder: /media/usb/parley\n  max_upload_mib: 200\n", file: "p.yaml")
        #expect(config.update.folder == "/media/usb/parley" && config.update.maxUploadBytes == 200 << 20)
        #expect(try ConfigLoader.parse("update: {folder: null}\n", file: "p.yaml").update.folder == nil)
    }

    @Test func wrongValuesAreNamedWithTheirLine() {
        WebConfigTests.expectRefused([
            ("update:\n  folder: bundles\n", 2, "update.folder", "\"bundles\" is not an absolute path (a folder of RAUC bundles)"),
            ("update:\n  max_upload_mib: 0\n", 2, "update.max_upload_mib", "0 is not in 1…65536"),
        ])
    }
}
