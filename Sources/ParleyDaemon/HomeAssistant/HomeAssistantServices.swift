import Foundation
import ParleyConfiguration
import Logging
import ParleyCore
import ParleyWyoming
import ServiceLifecycle

/// The daemon's Wyoming services, from `home_assistant` in parley.yaml
/// (none unless the owner turned a role on).
public enum HomeAssistantServices {
    /// Who may use the satellite and the handler: `home_assistant.allow`, or
    /// the first Home Assistant that speaks to either, kept in
    /// `<state>/home-assistant/peer`.
    public static func peers(config: ParleyConfig, logger: Logger) -> WyomingPeers {
        WyomingPeers(allow: config.homeAssistant.allow,
                     file: URL(fileURLWithPath: config.stateDirectory).appendingPathComponent("home-assistant/peer"), logger: logger)
    }

    /// Role 2: Parley's engine as a `handle` service for the house's other
    /// satellites. Its own engine over the same apps and stores.
    /// Returns the service and `parley status`'s line for it.
    public static func handler(config: ParleyConfig, stores: ParleyStores, registry: @escaping @Sendable () -> AppRegistry,
                               shortcuts: @escaping @Sendable () -> ShortcutLibrary, peers: WyomingPeers?,
                               logger: Logger) -> (service: any Service, status: @Sendable () -> String)? {
        let settings = config.homeAssistant
        guard settings.handler else { return nil }
        let handler = EngineTranscriptHandler(stores: stores, clock: SystemClock(), registry: { registry() }, initial: registry(),
                                              shortcuts: { shortcuts() })
        let info = WyomingInfo(handle: [WyomingHandleProgram(name: settings.name.lowercased())])
        let link = WyomingHandleLink()
        let server = WyomingServer(host: settings.listen, port: settings.handlerPort, peers: peers, logger: logger) { connection in
            WyomingHandleSession.run(connection, info: info, handler: handler, link: link, logger: logger)
        }
        let satelliteOn = settings.satellite
        return (WyomingServerService(server: server, logger: logger),
                { handlerStatusLine(link.status, port: settings.handlerPort, satelliteOn: satelliteOn) })
    }

    /// `parley status`'s line for the handle service: on, who is connected,
    /// the last transcript, and (the privacy rule) that no audio leaves
    /// through it; with the satellite off, that none leaves at all.
    static func handlerStatusLine(_ status: WyomingHandleLink.Status, port: Int, satelliteOn: Bool) -> String {
        let link = status.peers.isEmpty
            ? "handler on (port \(port)), Home Assistant not connected"
            : "handler on (port \(port)), connected: \(status.peers.joined(separator: ", "))"
        let last = status.lastTranscript.map { record in
            "last transcript \(record.at.formatted(date: .abbreviated, time: .standard)) from \(record.peer), "
                + (record.handled ? "handled" : "not handled")
        } ?? "no transcript yet"
        let audio = satelliteOn
            ? "no audio leaves the device through it (text in, text out)"
            : "no audio has left the device (text in, text out; the satellite is off)"
        return [link, last, audio].joined(separator: "; ")
    }
}

/// A Wyoming server as a service of the daemon's group: a port that cannot
/// be opened is logged and the device goes on without it.
struct WyomingServerService: Service {
    let server: WyomingServer
    let logger: Logger
    /// The mDNS name to announce the server under (the satellite's), nil for none.
    var announceAs: String?

    func run() async throws {
        // `listen: lan` before the network is up (parleyd starts first): look again every 5 s, as the page does.
        if server.resolvedHost == nil {
            logger.warning("home assistant: no private network address yet; waiting for one", metadata: ["port": "\(server.requestedPort)"])
            while server.resolvedHost == nil {
                try? await Task.sleep(for: .seconds(5))
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
            }
        }
        do {
            try server.start()
        } catch {
            logger.error("home assistant: cannot listen on \(server.host):\(server.requestedPort): \(error); going on without it")
            // A service that returns would end the whole group: wait for the stop instead.
            try? await gracefulShutdown()
            return
        }
        let announcement = announceAs.map { AvahiAnnouncement(name: $0, port: server.port, logger: logger) }
        try? await gracefulShutdown()
        announcement?.stop()
        server.stop()
    }
}

extension HomeAssistantServices {
    /// Role 1: the Wyoming satellite, local first. Commands the listening
    /// pipeline rejects after the wake word go to Home Assistant; answers,
    /// announcements and fault sentences are played by the speaker.
    public static func satellite(config: ParleyConfig, speaker: Speaker?, listening: ListeningPipeline?, peers: WyomingPeers?,
                                 logger: Logger)
        -> (service: any Service, status: @Sendable () -> String, setWake: @Sendable (ParleyConfig.Wake) -> Void)? {
        let settings = config.homeAssistant
        guard settings.satellite else { return nil }
        let satellite = WyomingSatellite(
            info: WyomingInfo(satellite: WyomingSatelliteInfo(name: settings.name, area: settings.area,
                                                              activeWakeWords: activeWakeWords(config.wake))),
            device: SpeakerSatelliteDevice(speaker: speaker), logger: logger)
        listening?.onRejected { samples, rate, heard, spokenEnd in
            // Off the listen thread: sending must never hold up listening.
            Task { await satellite.forward(RejectedUtterance(samples: samples, sampleRate: rate, heard: heard, spokenEnd: spokenEnd)) }
        }
        let server = WyomingServer(host: settings.listen, port: settings.port, maximumConnections: 2, peers: peers, logger: logger) {
            satellite.serve($0)
        }
        return (WyomingServerService(server: server, logger: logger, announceAs: settings.name), { statusLine(satellite.status) },
                { satellite.setActiveWakeWords(activeWakeWords($0)) })
    }

    /// The wake words the satellite tells Home Assistant it listens for.
    static func activeWakeWords(_ wake: ParleyConfig.Wake) -> [String] {
        wake.named ? ["hey \(wake.name)"] : ["hey"]
    }

    /// `parley status`'s line: the link, and when audio last left the device and why.
    static func statusLine(_ status: WyomingSatelliteStatus) -> String {
        let link = status.peer.map { "satellite, Home Assistant at \($0)" + (status.running ? "" : " (paused)") }
            ?? "satellite, Home Assistant not connected"
        let audio = status.lastAudioSent.map { record in
            "audio last left the device \(record.at.formatted(date: .abbreviated, time: .standard)) (\(record.bytes) bytes): \(record.reason)"
        } ?? "no audio has left the device"
        return ([link, audio] + (status.lastFault.map { ["last fault: \($0)"] } ?? [])).joined(separator: "; ")
    }
}

/// The satellite's device: Home Assistant's audio through the playback
/// service (resampled there to the device rate), sentences in Parley's voice.
struct SpeakerSatelliteDevice: WyomingSatelliteDevice {
    let speaker: Speaker?

    func play(samples: [Int16], sampleRate: Int) async {
        guard let speaker else { return }
        speaker.playback.enqueue(samples, sampleRate: sampleRate)
        await speaker.playback.drain()
    }

    func say(_ sentence: String) async {
        await speaker?.speak(sentence)
    }
}
