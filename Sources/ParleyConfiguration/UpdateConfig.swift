import Foundation

extension ParleyConfig {
    /// `update`: software updates on an A/B device with RAUC (issue 52;
    /// `parley update`, the page's upload).
    public struct Update: Sendable, Equatable {
        /// `update.folder`: a folder checked at start and daily for a RAUC
        /// bundle (`*.raucb`) newer than the running one, installed as
        /// `parley update` would. Off (nil) by default.
        public var folder: String?
        /// `update.url`: the address (http or https) of a RAUC bundle,
        /// checked as the folder is: RAUC reads its manifest and signature
        /// by streaming (ranges of it, never the whole file), and installs
        /// it streamed when it is newer. Off (nil) by default.
        public var url: String?
        /// `update.max_upload_mib`: the largest bundle the page accepts, in MiB
        /// (streamed to the state directory, never held in memory).
        public var maxUploadMiB = 1_024
        public init() {}

        public var maxUploadBytes: Int { maxUploadMiB << 20 }
    }
}

extension ConfigLoader {
    /// The `update:` section.
    /// Why `value` is not an address RAUC can stream a bundle from, or nil.
    public static func bundleURLProblem(_ value: String) -> String? {
        let lower = value.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return "\"\(value)\" is not an http:// or https:// address of a RAUC bundle"
        }
        guard value.count <= 2_048, !value.contains(where: { $0.isWhitespace || $0.isNewline }),
              let url = URL(string: value), let host = url.host, !host.isEmpty
        else { return "\"\(value)\" is not an address (a host, then the bundle's path; at most 2048 characters, no spaces)" }
        return nil
    }

    static func readUpdate(_ section: Field, into update: inout ParleyConfig.Update) throws {
        try section.forEachEntry(of: ["folder", "url", "max_upload_mib"]) { key, field in
            switch key {
            case "folder":
                guard let value = try field.optionalString() else { update.folder = nil; break }
                guard value.hasPrefix("/") else { throw field.impossible("\"\(value)\" is not an absolute path (a folder of RAUC bundles)") }
                update.folder = value
            case "url":
                guard let value = try field.optionalString() else { update.url = nil; break }
                if let problem = Self.bundleURLProblem(value) { throw field.impossible(problem) }
                update.url = value
            case "max_upload_mib": update.maxUploadMiB = try field.int(in: 1...65_536)
            default: throw field.unknownKey()
            }
        }
    }
}
