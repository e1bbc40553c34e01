import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A handler's descendants, from /proc. Killing the handler's process group
/// misses a child that left it (setsid(), setpgid(): a handler that
/// daemonizes its helper); while the handler runs, such a child is still its
/// child, so the tree finds it. (On the device the unit's cgroup ends
/// everything at the daemon's stop, and caps memory and tasks for all of
/// them together.)
enum ProcessTree {
    /// Every process below `root` (children, their children, ...), read from /proc/PID/stat.
    static func descendants(of root: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        var children: [pid_t: [pid_t]] = [:]
        for entry in entries {
            guard let pid = pid_t(entry), let parent = parent(of: pid) else { continue }
            children[parent, default: []].append(pid)
        }
        var found: [pid_t] = []
        var queue = children[root] ?? []
        while let next = queue.popLast(), found.count < 4_096 {
            found.append(next)
            queue += children[next] ?? []
        }
        return found
    }

    /// The parent in /proc/PID/stat: the field after the state, which follows
    /// the command name in parentheses (a name may hold spaces and parentheses).
    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    /// Kills `pid`'s process group and every descendant, stopping them first
    /// so none can start another between the look and the kill; a
    /// descendant that became a group leader takes its group with it.
    static func kill(group pid: pid_t) {
        _ = Glibc.kill(-pid, SIGSTOP)
        var seen = Set<pid_t>()
        // Stopped processes fork no more: two looks find what the first missed mid-fork.
        for _ in 0..<2 {
            for child in descendants(of: pid) where seen.insert(child).inserted { _ = Glibc.kill(child, SIGSTOP) }
        }
        _ = Glibc.kill(-pid, SIGKILL)
        for child in seen {
            if getpgid(child) == child { _ = Glibc.kill(-child, SIGKILL) }
            _ = Glibc.kill(child, SIGKILL)
        }
    }
}
