import ParleyControl
import ServiceLifecycle

// The control server is ParleyControl's (no daemon types); running it in the
// daemon's service group is the daemon's business, so ServiceLifecycle stays here.

/// The control socket as a service of the daemon's service group.
public struct ControlSocketService: Service {
    public let server: ControlServer
    private let onListening: @Sendable () -> Void

    /// `onListening` runs once the socket accepts connections (readiness).
    public init(server: ControlServer, onListening: @escaping @Sendable () -> Void = {}) {
        self.server = server
        self.onListening = onListening
    }

    public func run() async throws {
        try server.start()
        onListening()
        // Returns when graceful shutdown starts (SIGTERM) or throws on cancellation.
        try? await gracefulShutdown()
        server.stop()
    }
}
