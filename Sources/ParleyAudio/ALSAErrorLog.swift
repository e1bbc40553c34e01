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
/// on its 2nd, 3rd, 5th, 9th, 17th… occurrence (repeats counted, logged when
/// the repeat count is a power of two): a microphone that stays missing is
/// retried every few seconds, and the file plugin can say "invalid frames"
/// once per period from the capture thread, which must not write a log line
/// per period (a full standard-error pipe would stall capture, and the
/// journal would fill with one line). The failure itself is
/// reported by Parley in its own words (`AudioError`); these lines add
/// libasound's detail.
public enum ALSAErrorLog {
    struct State: Sendable {
        var logger: Logger?
        /// How often each message was seen (bounded: cleared when full).
        var seen: [String: Int] = [:]
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
        let (logger, count) = state.withLock { s -> (Logger?, Int) in
            let key = "\(source) \(text)"
            if s.seen[key] == nil && s.seen.count >= seenLimit { s.seen.removeAll() }
            let count = (s.seen[key] ?? 0) + 1
            s.seen[key] = count
            return (s.logger, count)
        }
        let repeats = count - 1
        guard repeats == 0 || repeats & (repeats - 1) == 0 else { return }
        var metadata: Logger.Metadata = ["alsa-lib": "\(source)"]
        if repeats > 1 { metadata["repeated"] = "\(repeats)" }
        logger?.log(level: repeats == 0 ? .notice : .debug, "\(text)", metadata: metadata)
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
