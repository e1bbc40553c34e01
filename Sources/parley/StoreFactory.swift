import ParleyCore

/// Where `parley chat` gets its state. Today: `EphemeralStores` (state for one
/// console session only). The SQLite stores of ParleyStore implement the
/// same protocols and plug in here.
enum StoreFactory {
    static func makeStores() throws -> ParleyStores {
        EphemeralStores.make()
    }
}
