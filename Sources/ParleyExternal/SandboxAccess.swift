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
    /// for folders and programs; with `writable`, write too, and without
    /// it group write is taken away (a tree copied with a umask of 002
    /// would otherwise let every handler rewrite the app). No set-ID bits
    /// (parleyd's unit has RestrictSUIDSGID, and files a handler makes are
    /// its own group's anyway, group-writable by the sandbox's UMask 0007).
    /// Returns what could not be changed, in words.
    ///
    /// The walk holds each folder open and reaches every entry from it
    /// (openat, O_NOFOLLOW), and changes what it opened (fchown, fchmod),
    /// never a path looked up again: the data folder is the handlers' to
    /// write, and a handler that swaps a folder in it for a symbolic link
    /// to the daemon's state while the walk runs must not get the state
    /// given to its group. Symbolic links are not followed; a file with
    /// more than one name (a hard link) is left as it is.
    @discardableResult
    public func grant(_ folder: URL, writable: Bool) -> [String] {
        var problems: [String] = []
        var entries = 0
        func failed(_ path: String, _ what: String) { problems.append("\(path): \(what): \(String(cString: strerror(errno)))") }
        /// `fd`: the entry at `path`, opened without following a link; closed here.
        func visit(_ fd: Int32, _ path: String) {
            defer { close(fd) }
            entries += 1
            guard entries <= Self.maximumEntries else { return }
            var info = stat()
            guard fstat(fd, &info) == 0 else { return failed(path, "cannot read its status") }
            let type = info.st_mode & S_IFMT
            guard type == S_IFDIR || type == S_IFREG else { return }
            let isFolder = type == S_IFDIR
            if !isFolder && info.st_nlink > 1 {
                problems.append("\(path): has \(info.st_nlink) names (hard links); left as it was")
                return
            }
            let old = info.st_mode & 0o7777
            // Group read; search on folders and on what its owner may run; write only when writable.
            var mode = (old | S_IRGRP) & ~(S_ISUID | S_ISGID)
            if isFolder || old & S_IXUSR != 0 { mode |= S_IXGRP }
            mode = writable ? mode | S_IWGRP : mode & ~S_IWGRP
            if info.st_gid != group && fchown(fd, uid_t.max, group) != 0 {
                return failed(path, "cannot give it to group \(groupName)")
            }
            if mode != old && fchmod(fd, mode) != 0 {
                return failed(path, "cannot make it group-\(writable ? "writable" : "readable")")
            }
            guard isFolder else { return }
            for name in Self.names(in: fd) {
                // O_NONBLOCK: a FIFO a handler left opens at once (and is skipped as not a file).
                let child = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
                guard child >= 0 else {
                    // ELOOP: a symbolic link; ENXIO: a socket. Neither is given.
                    if errno != ELOOP && errno != ENXIO { failed(path + "/" + name, "cannot open it") }
                    continue
                }
                visit(child, path + "/" + name)
            }
        }
        let top = open(folder.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard top >= 0 else {
            failed(folder.path, "cannot open it")
            return problems
        }
        visit(top, folder.path)
        if entries > Self.maximumEntries { problems.append("\(folder.path): more than \(Self.maximumEntries) entries; the rest left as they were") }
        return problems
    }

    /// The names in the open folder `fd` (not "." and ".."), sorted; the
    /// descriptor stays open.
    static func names(in fd: Int32) -> [String] {
        let listing = dup(fd)
        guard listing >= 0, let dir = fdopendir(listing) else {
            if listing >= 0 { close(listing) }
            return []
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
            if names.count > maximumEntries { break }
        }
        return names.sorted()
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
