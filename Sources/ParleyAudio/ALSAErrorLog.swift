import CParleyShims
import Glibc
import Logging
import Synchronization

/// libasound reports some failures itself, on standard error, as
/// "ALSA lib confmisc.c:165:(snd_config_get_card) Cannot get card index for 9":
/// outside the journal's one-line format and without a level. `route(to:)`
/// sends them to a logger instead (the handler is process-wide).
///
/// Each place in alsa-lib is logged once, at `notice`: with a handler
/// installed libasound also passes on internal notes it keeps quiet by
/// default, some once per audio period, and a microphone that stays missing
/// is retried every few seconds with the same lines each time. Repeats are
/// dropped in the C handler before any work is done, unless the logger is at
/// `trace`, where they are logged at `trace`. The failure itself is reported
/// by Parley in its own words (`AudioError`); these lines add libasound's detail.
public enum ALSAErrorLog {
    static let logger = Mutex<Logger?>(nil)

    /// Sends libasound's error messages to `logger` from now on.
    public static func route(to logger: Logger) {
        self.logger.withLock { $0 = logger }
        _ = parley_alsa_set_error_callback(forward, logger.logLevel <= .trace ? 1 : 0)
    }

    /// Gives libasound its own handler back (messages to standard error).
    public static func restoreDefault() {
        _ = parley_alsa_set_error_callback(nil, 0)
        logger.withLock { $0 = nil }
    }

    /// One message from the C handler (already formatted).
    static func log(file: String, line: Int, function: String, errno err: Int32, message: String, first: Bool) {
        // libasound's own handler appends the errno's text; so does this.
        let text = err != 0 ? "\(message): \(String(cString: strerror(err)))" : message
        let source = "\(file.split(separator: "/").last.map(String.init) ?? file):\(line) (\(function))"
        logger.withLock { $0 }?.log(level: first ? .notice : .trace, "\(text)", metadata: ["alsa-lib": "\(source)"])
    }
}

/// The C callback: a plain function, so it captures nothing.
private func forward(
    _ file: UnsafePointer<CChar>?, _ line: Int32, _ function: UnsafePointer<CChar>?, _ err: Int32,
    _ message: UnsafePointer<CChar>?, _ first: Int32
) {
    ALSAErrorLog.log(
        file: file.map { String(cString: $0) } ?? "?", line: Int(line),
        function: function.map { String(cString: $0) } ?? "?", errno: err,
        message: message.map { String(cString: $0) } ?? "", first: first != 0)
}
