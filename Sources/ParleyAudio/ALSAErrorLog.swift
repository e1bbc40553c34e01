import CParleyShims
import Glibc
import Logging
import Synchronization

/// libasound reports some failures itself, on standard error, as
/// "ALSA lib confmisc.c:165:(snd_config_get_card) Cannot get card index for 9":
/// outside the journal's one-line format and without a level. `route(to:)`
/// sends them to a logger instead (the handler is process-wide).
///
/// Each distinct message is logged at `notice` the first time and at `debug`
/// after that: a microphone that stays missing is retried every few seconds,
/// and every retry would repeat the same lines. The failure itself is
/// reported by Parley in its own words (`AudioError`); these lines add
/// libasound's detail.
public enum ALSAErrorLog {
    struct State: Sendable {
        var logger: Logger?
        /// Messages already logged at notice (bounded: cleared when full).
        var seen: Set<String> = []
    }

    static let state = Mutex(State())
    static let seenLimit = 256

    /// Sends libasound's error messages to `logger` from now on.
    public static func route(to logger: Logger) {
        state.withLock { $0 = State(logger: logger) }
        _ = parley_alsa_set_error_callback(forward)
    }

    /// Gives libasound its own handler back (messages to standard error).
    public static func restoreDefault() {
        _ = parley_alsa_set_error_callback(nil)
        state.withLock { $0 = State() }
    }

    /// One message from the C handler (already formatted).
    static func log(file: String, line: Int, function: String, errno err: Int32, message: String) {
        // libasound's own handler appends the errno's text; so does this.
        let text = err != 0 ? "\(message): \(String(cString: strerror(err)))" : message
        let source = "\(file.split(separator: "/").last.map(String.init) ?? file):\(line) (\(function))"
        let (logger, first) = state.withLock { s -> (Logger?, Bool) in
            let key = "\(source) \(text)"
            if s.seen.contains(key) { return (s.logger, false) }
            if s.seen.count >= seenLimit { s.seen.removeAll() }
            s.seen.insert(key)
            return (s.logger, true)
        }
        logger?.log(level: first ? .notice : .debug, "\(text)", metadata: ["alsa-lib": "\(source)"])
    }
}

/// The C callback: a plain function, so it captures nothing.
private func forward(
    _ file: UnsafePointer<CChar>?, _ line: Int32, _ function: UnsafePointer<CChar>?, _ err: Int32,
    _ message: UnsafePointer<CChar>?
) {
    ALSAErrorLog.log(
        file: file.map { String(cString: $0) } ?? "?", line: Int(line),
        function: function.map { String(cString: $0) } ?? "?", errno: err,
        message: message.map { String(cString: $0) } ?? "")
}
