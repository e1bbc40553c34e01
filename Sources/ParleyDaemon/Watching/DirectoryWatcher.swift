import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What changed in a watched directory since the last batch.
public struct DirectoryChange: Sendable, Hashable {
    /// Names (not paths) of entries created, written, removed or renamed.
    public var names: Set<String>
    /// True when the kernel's event queue overflowed: some names were lost,
    /// so the reader must rescan the whole directory.
    public var rescan: Bool

    public init(names: Set<String>, rescan: Bool = false) {
        self.names = names
        self.rescan = rescan
    }
}

/// Why a directory cannot be watched.
public struct DirectoryWatcherError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Watches one directory with inotify and reports its changes as batches on a
/// bounded `AsyncStream`.
///
/// A dedicated thread ("parley-watch") blocks in poll() on the inotify
/// descriptor and a pipe that `stop()` writes, so it costs nothing while
/// nothing changes and stops at once. Events are coalesced: a batch is only
/// delivered once the directory has been quiet for `quietPeriod` (an editor
/// saving a file makes several events; a copy of ten files makes dozens),
/// so a reader rebuilding something per batch does it once. The stream holds
/// at most `capacity` batches; when the reader is behind, the thread keeps
/// merging new names into the batch it could not deliver and tries again
/// after another quiet period, so the buffer stays bounded and no name is
/// lost. Only changes that finish a file are reported (`IN_CLOSE_WRITE` and
/// renames, not `IN_CREATE` or every `IN_MODIFY`), so a file is not read while
/// it is half written; editors that save by renaming a temporary file in are
/// seen by `IN_MOVED_TO`.
public final class DirectoryWatcher: Sendable {
    public let directory: String
    public let changes: AsyncStream<DirectoryChange>

    private let inotifyFD: Int32
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let quietMilliseconds: Int32
    private let continuation: AsyncStream<DirectoryChange>.Continuation
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(RunState.created)

    private enum RunState { case created, running, stopped }

    static let mask: UInt32 = UInt32(IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB)

    /// Opens the watch (the directory must exist); call `start()` to begin.
    /// - Parameters:
    ///   - quietPeriod: how long the directory must stay unchanged before a batch is delivered.
    ///   - capacity: how many undelivered batches the stream holds.
    ///   - includeCreated: also report entries as they are created (`IN_CREATE`):
    ///     a folder made with mkdir is otherwise never reported, since it is
    ///     not written to (the apps folder needs this to see `cp -r`).
    public init(directory: String, quietPeriod: Duration = .milliseconds(150), capacity: Int = 4,
                includeCreated: Bool = false) throws(DirectoryWatcherError) {
        self.directory = directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw DirectoryWatcherError("cannot watch '\(directory)': it is not an existing directory")
        }
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else {
            throw DirectoryWatcherError("cannot watch '\(directory)': inotify_init1: \(String(cString: strerror(errno)))")
        }
        guard inotify_add_watch(inotify, directory, Self.mask | (includeCreated ? UInt32(IN_CREATE) : 0)) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(inotify)
            throw DirectoryWatcherError("cannot watch '\(directory)': inotify_add_watch: \(reason)")
        }
        // A pipe wakes the thread for `stop()` (eventfd is not in Glibc's Swift module).
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            let reason = String(cString: strerror(errno))
            close(inotify)
            throw DirectoryWatcherError("cannot watch '\(directory)': pipe: \(reason)")
        }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        inotifyFD = inotify
        wakeFD = pipeFDs[0]
        wakeWriteFD = pipeFDs[1]
        let (seconds, attoseconds) = quietPeriod.components
        quietMilliseconds = Int32(clamping: max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        (changes, continuation) = AsyncStream.makeStream(of: DirectoryChange.self, bufferingPolicy: .bufferingOldest(max(1, capacity)))
    }

    /// Starts the watching thread. Calling it again does nothing.
    public func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard state == .created else { return false }
            state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            run()
            continuation.finish()
            finished.signal()
        }
        thread.name = "parley-watch"
        thread.start()
    }

    /// Stops the thread, waits for it and ends the stream. Safe to call twice
    /// and before `start()`.
    public func stop() {
        let previous = state.withLock { state -> RunState in
            defer { state = .stopped }
            return state
        }
        switch previous {
        case .running:
            var one: UInt8 = 1
            _ = write(wakeWriteFD, &one, 1)
            finished.wait()
        case .created:
            continuation.finish()
        case .stopped:
            break
        }
    }

    deinit {
        stop()
        close(inotifyFD)
        close(wakeFD)
        close(wakeWriteFD)
    }

    // MARK: The thread

    private func run() {
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0)]
        var pending = DirectoryChange(names: [])
        var hasPending = false
        // Doubles while the reader is behind (up to a second), so a stalled reader costs few wake-ups.
        var wait = quietMilliseconds
        // 4 KiB holds at least 16 events with names up to 255 bytes.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            // With something pending, wait only for the quiet period; else until an event.
            let timeout: Int32 = hasPending ? wait : -1
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress!, 2, timeout) }
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[0].revents != 0 { return }
            if ready == 0 {
                // Quiet for a whole period: deliver, or keep merging if the reader is behind.
                if case .enqueued = continuation.yield(pending) {
                    pending = DirectoryChange(names: [])
                    hasPending = false
                    wait = quietMilliseconds
                } else {
                    wait = max(quietMilliseconds, min(1000, wait * 2))
                }
                continue
            }
            if fds[1].revents != 0 {
                fds[1].revents = 0
                let gone = readEvents(into: &pending, buffer: buffer)
                hasPending = hasPending || !pending.names.isEmpty || pending.rescan
                wait = quietMilliseconds
                if gone {
                    // The directory itself was removed or moved: nothing more can come.
                    pending.rescan = true
                    _ = continuation.yield(pending)
                    return
                }
            }
        }
    }

    /// Reads every queued event; returns true when the watched directory is gone.
    private func readEvents(into pending: inout DirectoryChange, buffer: UnsafeMutableRawPointer) -> Bool {
        var gone = false
        while true {
            let count = read(inotifyFD, buffer, 4096)
            if count <= 0 { return gone }  // EAGAIN: drained
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { pending.rescan = true }
                if event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 { gone = true }
                if event.len > 0 {
                    let name = String(cString: (buffer + nameStart).assumingMemoryBound(to: CChar.self))
                    if !name.isEmpty { pending.names.insert(name) }
                }
                offset = nameStart + Int(event.len)
            }
        }
    }
}
