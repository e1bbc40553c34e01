import ServiceLifecycle

/// The updater's long-running part: after a restart into an update, says
/// the speaker is back once its slot is marked good; with `update.folder`,
/// checks that folder then and daily.
struct UpdateService: Service {
    let updater: Updater
    let folder: String?
    var interval: Duration = .seconds(86_400)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await updater.announceReturn()
            guard let folder else { return }
            // At start the slot is on trial until parley-mark-good (after parleyd is ready).
            _ = await updater.bootedWhenGood()
            while !Task.isCancelled {
                await updater.checkFolder(folder)
                try? await Task.sleep(for: interval)
            }
        }
        try? await gracefulShutdown()
    }
}
