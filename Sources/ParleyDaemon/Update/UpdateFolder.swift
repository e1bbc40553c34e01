import Foundation

/// `update.folder`: a folder (a USB stick's, a share's) checked at start and
/// daily for a RAUC bundle newer than the running slot's; one is installed
/// as `parley update` installs it.
extension Updater {
    /// Checks `folder` once; what it did, in words (also logged).
    @discardableResult
    public func checkFolder(_ folder: String) async -> String {
        let outcome = await folderOutcome(folder)
        logger.notice("update: folder checked", metadata: ["folder": "\(folder)", "outcome": "\(outcome)"])
        return outcome
    }

    private func folderOutcome(_ folder: String) async -> String {
        guard rauc.isInstalled else { return "no RAUC (\(rauc.path) missing): nothing installed" }
        guard let slots = await slots(fresh: true), let booted = slots.first(where: \.booted) else {
            return "RAUC cannot tell the slots: nothing installed"
        }
        // Never while the running slot is on trial: its fallback is the slot RAUC would write.
        guard booted.bootStatus == "good" else { return "slot \(booted.bootname ?? booted.name) is not marked good yet: nothing installed" }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: folder) } catch {
            return "\(folder) cannot be read (\(error.localizedDescription)): nothing installed"
        }
        let running = booted.version ?? ParleyVersion.current
        var newest: (path: String, version: String)?
        for name in names.sorted() where name.hasSuffix(".raucb") && !name.hasPrefix(".") {
            let path = (folder as NSString).appendingPathComponent(name)
            let version: String
            do { version = try await rauc.bundleVersion(path) } catch {
                logger.warning("update: \(error); skipped")
                continue
            }
            // A version a slot already had is not tried again (one that fell back would loop).
            guard Self.isNewer(version, than: running), !slots.contains(where: { $0.version == version }) else { continue }
            if newest.map({ Self.isNewer(version, than: $0.version) }) ?? true { newest = (path, version) }
        }
        guard let newest else { return "no bundle in \(folder) newer than \(running)" }
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
