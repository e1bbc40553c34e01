import Foundation
import Logging
import Synchronization

/// A swift-log handler writing one line per message to standard error in a
/// form the systemd journal reads well.
///
/// Under systemd (`$JOURNAL_STREAM` set) each line starts with the syslog
/// priority prefix `<N>` (sd-daemon(3)), which journald turns into the
/// entry's priority and strips; on a terminal the line reads
/// `LEVEL label: message key=value` instead. Every line also goes into a
/// ``LogRing`` for `parley logs`.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let ring: LogRing?
    private let journal: Bool

    public init(label: String, level: Logger.Level, ring: LogRing?, journal: Bool) {
        self.label = label
        self.logLevel = level
        self.ring = ring
        self.journal = journal
    }

    /// Installs the handler for the whole process (once, at start).
    public static func bootstrap(level: Logger.Level, ring: LogRing?) {
        let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in
            JournalLogHandler(label: label, level: level, ring: ring, journal: journal)
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let text = Self.format(level: event.level, label: label, message: "\(event.message)", metadata: all)
        ring?.append(text)
        let line = (journal ? "<\(Self.priority(event.level))>" : "") + text + "\n"
        Self.writeLock.withLock { _ in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { break }  // stderr gone: drop the line, never block the caller
                bytes = bytes.dropFirst(written)
            }
        }
    }

    /// `LEVEL label: message key=value …`, one line (newlines escaped).
    static func format(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var text = "\(level.rawValue.uppercased()) \(label): \(message)"
        for key in metadata.keys.sorted() {
            text += " \(key)=\(metadata[key]!)"
        }
        return text.replacingOccurrences(of: "\n", with: "\\n")
    }

    /// syslog(3) priorities: 7 debug … 2 critical.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Keeps lines from different threads whole.
    private static let writeLock = Mutex(())
}
