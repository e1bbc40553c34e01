import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// A request's context with the client's address as the socket gives it
/// (never from a header: nothing stands between a browser and the page, so
/// an X-Forwarded-For would be the client's own say). Pairing's lock-out is
/// per address.
public struct PageContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The address pairing counts guesses by; the router test client has
    /// none, and its requests share one name.
    public var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}

/// The page's connection limits: the page serves a household's phones, so
/// a few connections each. Past ``perAddress`` open connections from one
/// address, a new one is closed at once (one LAN device opening hundreds
/// cannot crowd out the owner's phone). At ``total``, the connection idle
/// longest (no request under way) is closed to make room, so connections
/// held open from many addresses cannot lock the owner out either; only
/// when every one is busy is the newcomer closed. A connection idle for
/// ``idleTimeout`` (between requests, or with its headers unfinished) is
/// closed (Hummingbird's idle timeout).
public struct PageLimits: Sendable {
    /// A browser opens up to 6 connections to a host; a status page holds one more.
    public var perAddress = 12
    public var total = 64
    public var idleTimeout: TimeAmount = .seconds(10)
    /// Request headers together: a browser sends 1-2 KiB; 64 connections at this are 1 MiB.
    public var headerBytes = 16 * 1024

    public init() {}
}

/// The open connections, shared by every connection's ``ConnectionLimit``
/// (the server's one event loop adds and removes; the lock keeps it correct
/// if that ever changes).
public final class ConnectionCounts: Sendable {
    private struct Open {
        let channel: any Channel
        let address: String
        var lastActive: ContinuousClock.Instant
        /// A request read and its response not finished (a status page's stream among them).
        var busy = false
    }

    private struct State {
        var open: [ObjectIdentifier: Open] = [:]
        var byAddress: [String: Int] = [:]
        var refused = 0
        var evicted = 0
        var lastLogged = ContinuousClock.Instant.now - .seconds(3_600)
    }

    private let state = Mutex(State())
    let limits: PageLimits
    let logger: Logger

    public init(limits: PageLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    /// Counts a new connection; false (not counted) when it must be closed.
    /// At the total, the idle-longest connection is closed to make room.
    func open(_ channel: any Channel, address: String) -> Bool {
        let id = ObjectIdentifier(channel)
        let (accepted, victim, report) = state.withLock { s -> (Bool, (any Channel)?, (Int, Int)?) in
            var victim: (any Channel)?
            var accepted = s.byAddress[address, default: 0] < limits.perAddress
            if accepted, s.open.count >= limits.total {
                if let oldest = s.open.filter({ !$0.value.busy }).min(by: { $0.value.lastActive < $1.value.lastActive }) {
                    s.open[oldest.key] = nil
                    s.byAddress[oldest.value.address, default: 1] -= 1
                    if s.byAddress[oldest.value.address] == 0 { s.byAddress[oldest.value.address] = nil }
                    victim = oldest.value.channel
                    s.evicted += 1
                } else {
                    accepted = false
                }
            }
            if accepted {
                s.open[id] = Open(channel: channel, address: address, lastActive: .now)
                s.byAddress[address, default: 0] += 1
            } else {
                s.refused += 1
            }
            // Said at most once a minute, with the counts meanwhile: a flood must not flood the journal.
            guard victim != nil || !accepted, ContinuousClock.now - s.lastLogged >= .seconds(60) else { return (accepted, victim, nil) }
            s.lastLogged = .now
            defer { (s.refused, s.evicted) = (0, 0) }
            return (accepted, victim, (s.refused, s.evicted))
        }
        victim?.close(promise: nil)
        if let (refused, evicted) = report {
            logger.warning("web: connections past the limits", metadata: [
                "address": "\(address)", "per-address": "\(limits.perAddress)", "total": "\(limits.total)",
                "refused": "\(refused)", "idle-closed-for-room": "\(evicted)",
            ])
        }
        return accepted
    }

    func activity(_ channel: any Channel, busy: Bool) {
        state.withLock { s in
            let id = ObjectIdentifier(channel)
            s.open[id]?.busy = busy
            s.open[id]?.lastActive = .now
        }
    }

    func close(_ channel: any Channel) {
        state.withLock { s in
            guard let gone = s.open.removeValue(forKey: ObjectIdentifier(channel)) else { return }
            let left = s.byAddress[gone.address, default: 1] - 1
            s.byAddress[gone.address] = left > 0 ? left : nil
        }
    }

    /// Open connections from `address` (tests).
    public func count(_ address: String) -> Int { state.withLock { $0.byAddress[address, default: 0] } }
    /// Open connections in all (tests).
    public var total: Int { state.withLock { $0.open.count } }
}

/// In every connection's pipeline after the HTTP decoder: counts the
/// connection against the limits (closing it at once past them) and notes
/// when a request starts and its response ends, so that the idle-longest
/// connection, never a busy one, makes room.
final class ConnectionLimit: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart
    let counts: ConnectionCounts

    init(counts: ConnectionCounts) { self.counts = counts }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        guard let address = channel.remoteAddress?.ipAddress else { return }
        guard counts.open(channel, address: address) else {
            channel.close(promise: nil)
            return
        }
        let counts = self.counts
        channel.closeFuture.whenComplete { _ in counts.close(channel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { counts.activity(context.channel, busy: true) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { counts.activity(context.channel, busy: false) }
        context.write(data, promise: promise)
    }
}
