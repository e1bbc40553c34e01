import ServiceLifecycle

/// The updater's long-running part: after a restart into an update, says
/// the speaker is back once its slot is marked good; with `update.folder`
/// or `update.url`, checks them then and daily.
struct UpdateService: Service {
    let updater: Updater
    let folder: String?
    var url: String? = nil
    var interval: Duration = .seconds(86_400)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await updater.announceReturn()
            guard folder != nil || url != nil else { return }
            // At start the slot is on trial until parley-mark-good (after parleyd is ready).
            _ = await updater.bootedWhenGood()
            while !Task.isCancelled {
                // A bundle the folder gave is installing (a restart follows): the address waits.
                var installed = false
                if let folder { installed = await updater.checkFolder(folder).hasPrefix("Installed ") }
                if let url, !installed { await updater.checkURL(url) }
                try? await Task.sleep(for: interval)
            }
        }
        try? await gracefulShutdown()
    }
}
