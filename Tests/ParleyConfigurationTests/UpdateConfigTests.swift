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
        #expect(ParleyConfig().update.url == nil)
        #expect(try ConfigLoader.parse("update:\n  url: https://updates.example.org/parley/parley-pi4.raucb\n", file: "p.yaml").update.url
            == "https://updates.example.org/parley/parley-pi4.raucb")
    }

    @Test func wrongValuesAreNamedWithTheirLine() {
        WebConfigTests.expectRefused([
            ("update:\n  folder: bundles\n", 2, "update.folder", "\"bundles\" is not an absolute path (a folder of RAUC bundles)"),
            ("update:\n  max_upload_mib: 0\n", 2, "update.max_upload_mib", "0 is not in 1…65536"),
            ("update:\n  url: /data/b.raucb\n", 2, "update.url", "\"/data/b.raucb\" is not an http:// or https:// address of a RAUC bundle"),
            ("update:\n  url: \"http:// x\"\n", 2, "update.url",
             "\"http:// x\" is not an address (a host, then the bundle's path; at most 2048 characters, no spaces)"),
        ])
    }
}
