import Foundation

/// A script written for a test to run. Foundation's `write(toFile:)` opens
/// its file without close-on-exec: while it is open, a process another test
/// forks keeps a writable descriptor to it, and running the script then fails
/// with "text file busy" (ETXTBSY) for as long as that child lives. Opened
/// with O_CLOEXEC, the descriptor cannot outlive a child's exec.
public struct ExecutableFileError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32
    public var description: String { "\(path): \(String(cString: strerror(errno)))" }
}

public func writeExecutable(_ text: String, toFile path: String, mode: mode_t = 0o755) throws {
    unlink(path)
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else { throw ExecutableFileError(path: path, errno: errno) }
    defer { close(fd) }
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw ExecutableFileError(path: path, errno: errno)
        }
        bytes = bytes.dropFirst(written)
    }
    // The mode asked for, whatever the umask took from it.
    guard fchmod(fd, mode) == 0 else { throw ExecutableFileError(path: path, errno: errno) }
}
