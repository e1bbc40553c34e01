import Logging
import ParleyStore

/// Builds the components parleyd runs with from the configuration: the
/// single place where the engine, audio, speech and board modules are
/// plugged in (see ``DaemonComponents``).
public enum Wiring {
    public static func components(config: ParleyConfig, store: StateStore, logger: Logger) async throws
        -> DaemonComponents
    {
        // Integration point: the conversation engine (ParleyCore + ParleyApps),
        // audio (ParleyAudio), recogniser and speaker (ParleySpeech) and the
        // board (ParleyHardware) are plugged in here once their branches are
        // merged. Until then the daemon runs the store and the control socket.
        DaemonComponents()
    }
}
