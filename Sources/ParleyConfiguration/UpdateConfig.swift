import Foundation

extension ParleyConfig {
    /// `update`: software updates on an A/B device with RAUC (issue 52;
    /// `parley update`, the page's upload).
    public struct Update: Sendable, Equatable {
        /// `update.folder`: a folder checked at start and daily for a RAUC
        /// bundle (`*.raucb`) newer than the running one, installed as
        /// `parley update` would. Off (nil) by default.
        public var folder: String?
        /// `update.max_upload_mib`: the largest bundle the page accepts, in MiB
        /// (streamed to the state directory, never held in memory).
        public var maxUploadMiB = 1_024
        public init() {}

        public var maxUploadBytes: Int { maxUploadMiB << 20 }
    }
}

extension ConfigLoader {
    /// The `update:` section.
    static func readUpdate(_ section: Field, into update: inout ParleyConfig.Update) throws {
        try section.forEachEntry(of: ["folder", "max_upload_mib"]) { key, field in
            switch key {
            case "folder":
                guard let value = try field.optionalString() else { update.folder = nil; break }
                guard value.hasPrefix("/") else { throw field.impossible("\"\(value)\" is not an absolute path (a folder of RAUC bundles)") }
                update.folder = value
            case "max_upload_mib": update.maxUploadMiB = try field.int(in: 1...65_536)
            default: throw field.unknownKey()
            }
        }
    }
}
