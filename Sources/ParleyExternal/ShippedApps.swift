import Foundation
import ParleyDevice

/// The external apps that come with Parley: the package installs them
/// read-only in /usr/share/parley/apps (a checkout has them in
/// examples/apps), and none runs until a person installs it into the apps
/// folder (`parley apps install NAME`), because each needs something of the
/// house: Home Assistant's address and token, relays on GPIO, a list file.
public enum ShippedApps {
    public static let installedFolder = "/usr/share/parley/apps"
    public static let developmentFolder = "examples/apps"

    /// The installed folder, else the checkout's the executable was built
    /// in; nil when neither exists.
    public static var folder: URL? {
        folder(installed: installedFolder, executable: CommandLine.arguments[0])
    }

    static func folder(installed: String, executable: String) -> URL? {
        if !AppsFolder.folderNames(URL(fileURLWithPath: installed)).isEmpty { return URL(fileURLWithPath: installed) }
        return SourceTree.root(holding: developmentFolder, executable: executable)?.appendingPathComponent(developmentFolder)
    }

    /// One shipped app: its folder name (what `install` takes), the name
    /// its manifest gives it, and why it cannot be installed on this
    /// machine, if it cannot (its handler's interpreter missing: the
    /// package suggests python3 but does not depend on it).
    public struct Entry: Sendable, Equatable {
        public var folder: String
        public var name: String
        public var problem: String?
        public init(folder: String, name: String, problem: String? = nil) {
            self.folder = folder
            self.name = name
            self.problem = problem
        }
    }

    /// The app folders of `folder`, by folder name; one whose manifest does
    /// not load here is listed under its folder name with the first reason.
    public static func entries(in folder: URL) -> [Entry] {
        AppsFolder.folderNames(folder).map { name in
            do throws(ManifestErrors) {
                return Entry(folder: name, name: try ManifestLoader.load(folder: folder.appendingPathComponent(name)).name)
            } catch {
                return Entry(folder: name, name: name, problem: error.errors.first?.reason ?? error.description)
            }
        }
    }
}

/// Why an app could not be installed into the apps folder.
public enum AppInstallError: Error, Sendable, CustomStringConvertible {
    /// No shipped app has that folder name.
    case unknown(String, available: [String])
    /// The apps folder already has a folder of that name.
    case alreadyInstalled(folder: String)
    /// The app breaks a rule of the manifest or of registration alongside
    /// the apps installed now.
    case refused(ManifestErrors)
    /// Copying into the apps folder failed (permissions, space).
    case copy(String)

    public var description: String {
        switch self {
        case .unknown(let name, let available):
            "no app \"\(name)\" comes with Parley (\(available.isEmpty ? "none is installed here" : "there are: " + available.joined(separator: ", ")))"
        case .alreadyInstalled(let folder):
            "\(folder) already exists: the app is installed (remove that folder first to install it afresh)"
        case .refused(let errors): "it cannot be installed beside the apps there:\n\(errors.description)"
        case .copy(let reason): "copying it into the apps folder failed: \(reason)"
        }
    }
}

extension ExternalAppsHost {
    /// Installs the app folder `source` into the apps folder as `name`: it
    /// is checked against the apps there first (a refused app is not
    /// copied), copied under a hidden name (the folder scan skips it, so a
    /// half-copied app is never loaded) and renamed, then loaded and its
    /// handler started. The caller hands the new `descriptions` to the engine.
    public func install(_ source: URL, as name: String) async throws(AppInstallError) -> ExternalApp {
        let target = directory.appendingPathComponent(name)
        guard !FileManager.default.fileExists(atPath: target.path) else { throw .alreadyInstalled(folder: target.path) }
        do {
            _ = try ExternalApp.load(folder: source, installed: builtIn + all.map(\.description),
                                     primaryApp: primaryApp, logger: logger)
        } catch {
            throw .refused(error)
        }
        let staging = directory.appendingPathComponent(".\(name).installing-\(getpid())")
        do {
            try? FileManager.default.removeItem(at: staging)
            try Self.copyFolder(source, to: staging)
            try FileManager.default.moveItem(at: staging, to: target)
        } catch {
            try? FileManager.default.removeItem(at: staging)
            throw .copy("\(error.localizedDescription) (\(target.path))")
        }
        let changes = await refresh()
        if changes.refused.contains(name), let errors = refusals[name] { throw .refused(errors) }
        guard let app = app(inFolder: name) else {
            throw .copy("\(target.path) was copied but not loaded (changes: \(changes))")
        }
        return app
    }

    /// Copies a folder's files and subfolders with their permission bits,
    /// as the daemon's own: FileManager's copyItem also carries the owner
    /// over, which the daemon (user parley) may not do with root's files
    /// from /usr/share. Symbolic links are not followed or copied.
    static func copyFolder(_ source: URL, to target: URL) throws {
        let files = FileManager.default
        try files.createDirectory(at: target, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        for name in try files.contentsOfDirectory(atPath: source.path) {
            let from = source.appendingPathComponent(name), to = target.appendingPathComponent(name)
            let attributes = try files.attributesOfItem(atPath: from.path)
            switch attributes[.type] as? FileAttributeType {
            case .typeDirectory?:
                try copyFolder(from, to: to)
            case .typeRegular?:
                try Data(contentsOf: from).write(to: to)
                let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o644
                try files.setAttributes([.posixPermissions: mode & 0o755], ofItemAtPath: to.path)
            default:
                continue
            }
        }
    }
}
