import Foundation

/// `update.folder` and `update.url`: a folder (a USB stick's, a share's)
/// or the address of a bundle, checked at start and daily for a RAUC bundle
/// newer than the running slot's; one is installed as `parley update`
/// installs it.
extension Updater {
    /// Checks `folder` once; what it did, in words (also logged).
    @discardableResult
    public func checkFolder(_ folder: String) async -> String {
        let outcome = await newestOutcome(from: folder) {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            return names.sorted().filter { $0.hasSuffix(".raucb") && !$0.hasPrefix(".") }
                .map { (folder as NSString).appendingPathComponent($0) }
        }
        logger.notice("update: folder checked", metadata: ["folder": "\(folder)", "outcome": "\(outcome)"])
        return outcome
    }

    /// Checks the bundle at `url` once (RAUC streams what it reads); what
    /// it did, in words (also logged).
    @discardableResult
    public func checkURL(_ url: String) async -> String {
        let outcome = await newestOutcome(from: url) { [url] }
        logger.notice("update: address checked", metadata: ["url": "\(url)", "outcome": "\(outcome)"])
        return outcome
    }

    /// Whether `path` is an address RAUC streams from rather than a file.
    static func isAddress(_ path: String) -> Bool {
        let lower = path.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    /// The bundles of `source` (`list`), the newest newer than the running
    /// slot installed.
    private func newestOutcome(from source: String, list: () throws -> [String]) async -> String {
        guard rauc.isInstalled else { return "no RAUC (\(rauc.path) missing): nothing installed" }
        guard let slots = await slots(fresh: true), let booted = slots.first(where: \.booted) else {
            return "RAUC cannot tell the slots: nothing installed"
        }
        // Never while the running slot is on trial: its fallback is the slot RAUC would write.
        guard booted.bootStatus == "good" else { return "slot \(booted.bootname ?? booted.name) is not marked good yet: nothing installed" }
        let bundles: [String]
        do { bundles = try list() } catch {
            return "\(source) cannot be read (\(error.localizedDescription)): nothing installed"
        }
        let running = booted.version ?? ParleyVersion.current
        var newest: (path: String, version: String)?
        var read = 0, refusal: String?
        for bundle in bundles {
            let version: String
            do { version = try await rauc.bundleVersion(bundle) } catch {
                logger.warning("update: \(error); skipped")
                refusal = "\(error)"
                continue
            }
            read += 1
            // A version a slot already had is not tried again (one that fell back would loop).
            guard Self.isNewer(version, than: running), !slots.contains(where: { $0.version == version }) else { continue }
            if newest.map({ Self.isNewer(version, than: $0.version) }) ?? true { newest = (bundle, version) }
        }
        guard let newest else {
            if read == 0, let refusal { return "\(refusal): nothing installed" }
            return Self.isAddress(source) ? "the bundle at \(source) is not newer than \(running)" : "no bundle in \(source) newer than \(running)"
        }
        do {
            return try await install(newest.path)
        } catch {
            return error.description
        }
    }

    /// Versions compared part by part, numbers as numbers ("0.1.10" after "0.1.9").
    static func isNewer(_ version: String, than other: String) -> Bool {
        version.compare(other, options: [.numeric]) == .orderedDescending
    }
}
