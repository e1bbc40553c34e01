import ParleyCore
import ParleyStore

/// Where `parley chat` gets its state: the daemon's SQLite store in a folder
/// given with `--state`, or, without it, `EphemeralStores` (state for one
/// console session only, so typed conversations start from a known state).
enum StoreFactory {
    static func makeStores(stateDirectory: String?) throws -> ParleyStores {
        guard let stateDirectory else { return EphemeralStores.make() }
        let store = try StateStore(directory: stateDirectory)
        return ParleyStores(donations: store, customPhrases: store, appData: store)
    }
}
