import Logging
import ParleyConfiguration
import ParleyControl
import ParleyStore
import ServiceLifecycle

/// What a part plugged into parleyd beside the control socket (the web page)
/// is given: the same handler the socket answers with, so it never needs a
/// second path into the daemon, and the pieces that handler was made from.
public struct DaemonAttachmentContext: Sendable {
    public let config: ParleyConfig
    public let configFile: String?
    public let store: StateStore
    public let components: DaemonComponents
    public let logs: LogRing
    public let handler: any ControlHandling
    public let logger: Logger
}

/// What it gives back: the handler the control socket answers with from now
/// on (its own requests first, the rest passed on), and its services, run in
/// the daemon's service group after the components and before the socket.
public struct DaemonAttachment: Sendable {
    public var handler: any ControlHandling
    public var services: [any Service]
    public init(handler: any ControlHandling, services: [any Service]) {
        self.handler = handler
        self.services = services
    }
}

public typealias DaemonAttach = @Sendable (DaemonAttachmentContext) async throws -> DaemonAttachment
