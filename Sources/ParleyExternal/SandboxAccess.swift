import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What the handler sandbox's user (`parley-app`, HandlerLimits.sandbox)
/// needs of the daemon's folders, given through that user's group: read
/// the app's own folder, read and write its data folder (PARLEY_APP_DATA),
/// pass through the folders above them. Nothing else of the daemon's
/// state (its database, settings, sessions) is open to the group: the state
/// directory itself only lets others pass (0751, the unit's
/// StateDirectoryMode), and its files are 0640 or tighter.
public struct SandboxAccess: Sendable, Hashable {
    public let groupName: String
    public let group: gid_t

    /// The sandbox's group as the system knows it; nil when there is none
    /// (the package's sysusers file makes it).
    public static func lookup(group name: String = "parley-app") -> SandboxAccess? {
        // getgrnam_r: apps load on several tasks at once.
        var entry = Glibc.group(), result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return SandboxAccess(groupName: name, group: entry.gr_gid)
    }

    public init(groupName: String, group: gid_t) {
        self.groupName = groupName
        self.group = group
    }

    /// At most this many entries are changed in one folder: an app folder is
    /// a handful of files, a data folder a few more.
    static let maximumEntries = 10_000

    /// Gives the group `folder` and everything below it: read, and search
    /// for folders and programs; with `writable`, write too. (No
    /// set-group-ID folders: parleyd's unit has RestrictSUIDSGID, and files
    /// a handler makes are its own group's anyway, group-writable by the
    /// sandbox's UMask 0007.) Symbolic links are not followed. Returns what
    /// could not be changed, in words.
    @discardableResult
    public func grant(_ folder: URL, writable: Bool) -> [String] {
        var problems: [String] = []
        var entries = 0
        func visit(_ path: String) {
            entries += 1
            guard entries <= Self.maximumEntries else { return }
            var info = stat()
            guard lstat(path, &info) == 0 else { return problems.append("\(path): \(String(cString: strerror(errno)))") }
            let type = info.st_mode & S_IFMT
            guard type == S_IFDIR || type == S_IFREG else { return }
            let isFolder = type == S_IFDIR
            // Group read; search on folders and on what its owner may run; write when writable.
            var mode = info.st_mode & 0o7777 | S_IRGRP
            if isFolder || info.st_mode & S_IXUSR != 0 { mode |= S_IXGRP }
            if writable { mode |= S_IWGRP }
            if info.st_gid != group && lchown(path, uid_t.max, group) != 0 {
                problems.append("\(path): cannot give it to group \(groupName): \(String(cString: strerror(errno)))")
            } else if mode != info.st_mode & 0o7777 && chmod(path, mode) != 0 {
                problems.append("\(path): cannot make it group-\(writable ? "writable" : "readable"): \(String(cString: strerror(errno)))")
            }
            guard isFolder, let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
            for name in names.sorted() { visit(path + "/" + name) }
        }
        visit(folder.path)
        if entries > Self.maximumEntries { problems.append("\(folder.path): more than \(Self.maximumEntries) entries; the rest left as they were") }
        return problems
    }

    /// Lets the group pass through `folder` (search, not list): the folders
    /// holding app folders and data folders.
    @discardableResult
    public func pass(_ folder: URL) -> String? {
        var info = stat()
        guard stat(folder.path, &info) == 0 else { return "\(folder.path): \(String(cString: strerror(errno)))" }
        if info.st_gid != group && chown(folder.path, uid_t.max, group) != 0 {
            return "\(folder.path): cannot give it to group \(groupName): \(String(cString: strerror(errno)))"
        }
        let mode = (info.st_mode & 0o7777) | S_IXGRP
        if mode != info.st_mode & 0o7777 && chmod(folder.path, mode) != 0 {
            return "\(folder.path): cannot let group \(groupName) pass: \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
