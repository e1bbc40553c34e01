import Foundation
import Logging

/// Announces the satellite over mDNS as `_wyoming._tcp` (how Home
/// Assistant discovers Wyoming satellites) for as long as it serves, with
/// Avahi's `avahi-publish-service` (avahi-utils; the image installs it with
/// avahi-daemon). Published by parleyd rather than a static file in
/// /etc/avahi/services, so nothing is announced while the link is off.
/// Without Avahi the satellite still serves; the owner adds it by address.
final class AvahiAnnouncement: Sendable {
    static let tool = "/usr/bin/avahi-publish-service"
    private let process: Process?

    /// `tool`: avahi-publish-service (tests give a stand-in).
    init(name: String, port: Int, logger: Logger, tool: String = AvahiAnnouncement.tool) {
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            logger.notice("home assistant: \(tool) missing (avahi-utils); not announced over mDNS, add the satellite by address")
            process = nil
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        // -s: a service name that clashes is an error rather than renamed silently.
        process.arguments = ["-s", name, "_wyoming._tcp", String(port)]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            logger.info("home assistant: announced over mDNS", metadata: ["service": "\(name)._wyoming._tcp", "port": "\(port)"])
            self.process = process
        } catch {
            logger.warning("home assistant: cannot start \(tool): \(error); not announced over mDNS")
            self.process = nil
        }
    }

    /// Whether an announcement was started (false without Avahi).
    var isAnnouncing: Bool { process != nil }

    func stop() {
        guard let process, process.isRunning else { return }
        // Not waited for: the publisher ends at SIGTERM, and a stop must never block.
        process.terminate()
    }
}
