import Foundation
import HTTPTypes
import Hummingbird
import ParleyControl
import ParleyDaemon

/// Settings' "Software update" (issue 52): a paired browser uploads a RAUC
/// bundle, streamed to `<state>/update/upload.raucb` (the data partition on
/// the device; never held in memory, at most `update.max_upload_mib`), then
/// installed as `parley update` installs it. The form is multipart: its
/// anti-forgery token comes before the file and is checked before a byte of
/// the file is written.
extension WebPage {
    enum Received {
        case file(name: String, bytes: Int)
        case refused(HTTPResponse.Status, String)
    }

    /// Where an uploaded bundle is written; nil without an updater.
    var uploadedBundle: String? { updater.map { ($0.directory as NSString).appendingPathComponent("upload.raucb") } }

    func uploadUpdate(_ request: Request) async throws -> Response {
        guard RequestRules.originAllowed(origin: request.headers[.origin], host: request.head.authority) else {
            logger.notice("web: refused an update upload from another origin", metadata: ["origin": "\(request.headers[.origin] ?? "none")"])
            return Self.plain(.forbidden, "Refused: this change did not come from the speaker's own page.")
        }
        guard let token = session(request) else {
            return Self.plain(.forbidden, "Refused: this browser is not paired with the speaker (open /pair).")
        }
        let visit = Visit(request: request, session: token)
        guard let updater, updater.rauc.isInstalled, let target = uploadedBundle else {
            return try await settingsPage(visit, message: "This speaker has no RAUC (\(updater?.rauc.path ?? Rauc.defaultPath)): it cannot be updated from the page.", status: .conflict)
        }
        if let busy = updater.installingBundle {
            return try await settingsPage(visit, message: "An update (\(busy)) is being installed; wait for it to finish.", status: .conflict)
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxUploadBytes + 64 * 1024 {
            return try await settingsPage(visit, message: tooLarge, status: .contentTooLarge)
        }
        guard uploading.withLock({ busy in defer { busy = true }; return !busy }) else {
            return try await settingsPage(visit, message: "Another bundle is being uploaded; wait for it to finish.", status: .conflict)
        }
        defer { uploading.withLock { $0 = false } }
        switch await receive(request, token: token, to: target) {
        case .refused(let status, let message):
            logger.notice("web: update upload refused", metadata: ["reason": "\(message)"])
            return try await settingsPage(visit, message: message, status: status)
        case .file(let name, let bytes):
            logger.notice("web: update uploaded", metadata: ["file": "\(name)", "bytes": "\(bytes)", "to": "\(target)"])
            let logger = self.logger
            // Installed after the answer (minutes on a Pi): the speaker says what it does, the page shows the outcome.
            Task.detached {
                do { _ = try await updater.install(target) } catch { logger.error("web: update not installed: \(error)") }
                try? FileManager.default.removeItem(atPath: target)
            }
            return try await settingsPage(visit, message: "Received \(name) (\(Self.size(bytes))). Installing it now: the speaker says when it restarts, and this page shows how it went.")
        }
    }

    private var tooLarge: String { "Refused: a bundle may be at most \(Self.size(maxUploadBytes)) (update.max_upload_mib)." }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MiB", Double(bytes) / 1_048_576) : "\(bytes >> 10) KiB"
    }

    /// Streams the form's file to `target` (through `target.part`, renamed once complete).
    func receive(_ request: Request, token: String, to target: String) async -> Received {
        guard var reader = MultipartReader(contentType: request.headers[.contentType]) else {
            return .refused(.unsupportedMediaType, "Refused: an update is sent as multipart/form-data, the page's own form.")
        }
        let part = target + ".part"
        var handle: FileHandle?, written = 0, name: String?, complete = false, tokenValid = false
        func refuse(_ status: HTTPResponse.Status, _ message: String) -> Received {
            try? handle?.close()
            try? FileManager.default.removeItem(atPath: part)
            return .refused(status, message)
        }
        do {
            for try await chunk in request.body {
                for event in try reader.feed(chunk.readableBytesView) {
                    switch event {
                    case .field(let field, let value):
                        if field == "form_token" { tokenValid = RequestRules.formTokenValid(value, session: token) }
                    case .fileStart(_, let filename):
                        guard tokenValid else {
                            return refuse(.forbidden, "Refused: the form's anti-forgery token is missing or wrong; reload the page.")
                        }
                        guard name == nil else { return refuse(.badRequest, "Refused: one bundle at a time.") }
                        try FileManager.default.createDirectory(atPath: (part as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                        guard FileManager.default.createFile(atPath: part, contents: nil, attributes: [.posixPermissions: 0o640]) else {
                            return refuse(.internalServerError, "The bundle could not be written: \(part) cannot be created.")
                        }
                        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: part))
                        name = filename.isEmpty ? "the bundle" : (filename as NSString).lastPathComponent
                    case .fileData(let bytes):
                        written += bytes.count
                        guard written <= maxUploadBytes else { return refuse(.contentTooLarge, tooLarge) }
                        try handle?.write(contentsOf: bytes)
                    case .fileEnd:
                        try handle?.close()
                        handle = nil
                        complete = true
                    }
                }
            }
        } catch let error as MultipartReader.Malformed {
            return refuse(.badRequest, "Refused: the upload is not a well-formed form: \(error).")
        } catch {
            return refuse(.internalServerError, "The bundle could not be written to \(part): \(error)")
        }
        guard reader.finished, complete, let name, written > 0 else {
            return refuse(.badRequest, "Refused: the form held no bundle file (choose a .raucb file).")
        }
        do {
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.moveItem(atPath: part, toPath: target)
        } catch {
            return refuse(.internalServerError, "The bundle could not be moved to \(target): \(error)")
        }
        return .file(name: name, bytes: written)
    }

    /// The section of Settings: the slots, what is being installed, the last outcome, the form.
    func updateSection(_ visit: Visit) async -> String {
        guard let updater, updater.rauc.isInstalled else { return "" }
        let slots = await updater.slots().map { "Slots: " + SlotSummary.line($0) + "." } ?? "RAUC cannot tell the slots now."
        let busy = updater.installingBundle.map { "<p class=\"note\" id=\"update-busy\">Installing \(Pages.esc($0)) now.</p>" } ?? ""
        let last = updater.lastOutcome.map { "<p class=\"hint\" id=\"update-outcome\">Last update: \(Pages.esc($0))</p>" } ?? ""
        return """
            <h2>Software update</h2>
            <p id="update-slots">\(Pages.esc(slots))</p>\(busy)\(last)
            <form method="post" action="/settings/update" enctype="multipart/form-data" id="update-form">\
            <input type="hidden" name="form_token" value="\(Pages.esc(visit.formToken))">\
            <label>Bundle <input type="file" name="bundle" accept=".raucb" required>\
            <span class="hint">a signed RAUC bundle (.raucb), at most \(Self.size(maxUploadBytes))</span></label>\
            <button id="install-update">Install</button></form>
            <p class="hint">The speaker says when it installs, restarts into the new version and is back; if that version does not start, it goes back to this one.</p>
            """
    }
}
