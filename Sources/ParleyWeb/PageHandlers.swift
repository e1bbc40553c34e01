import Foundation
import HTTPTypes
import Hummingbird
import ParleyCore
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ServiceLifecycle

/// What each page asks the daemon and how it answers a form.
extension WebPage {
    func statusPage(_ visit: Visit) async throws -> Response {
        let status = try await ask(.status).status
        let logs = try await ask(.logs(limit: 300)).logs ?? []
        return html(Pages.status(status, heard: Self.lastHeard(logs), settings: settings?.current(), visit: visit))
    }

    /// The newest lines about what was heard and what became of it: heard,
    /// rejected (at log_level debug), not understood, performed.
    static func lastHeard(_ logs: [String]) -> [String] {
        let marks = ["parley.listen: heard", "parley.listen: rejected", "parley.listen: woken", "parley.engine: resolved", "not understood",
                     "parleyd: performed", "parley.engine: performed", "performed intent="]
        return Array(logs.filter { line in marks.contains { line.contains($0) } }.suffix(5).reversed())
    }

    /// Server-Sent Events: the state once a second while the page is open.
    /// Nothing runs while nobody has it open; a stream ends after ten
    /// minutes (the browser reconnects) and at the daemon's stop.
    func events() -> Response {
        let handler = self.handler
        let body = ResponseBody { writer in
            for _ in 0..<600 {
                if Task.isCancelled || Task.isShuttingDownGracefully { break }
                let status = await handler.handle(.status).status
                let heard = Self.lastHeard(await handler.handle(.logs(limit: 300)).logs ?? []).first ?? ""
                let payload: [String: String] = [
                    "state": status?.state ?? "unknown", "led": status?.led ?? "", "audio": status?.audio.state ?? "",
                    "speaking": (status?.audio.speaking ?? false) ? "yes" : "no",
                    "recognitions": String(status?.recognitions ?? 0),
                    "last": status?.lastIntents.first ?? "", "heard": heard,
                ]
                let json = (try? JSONEncoder().encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                try await writer.write(ByteBuffer(string: "data: \(json)\n\n"))
                try? await Task.sleep(for: .seconds(1))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    func shortcutsPage(_ visit: Visit) async throws -> Response {
        let shortcuts = try await ask(.personalShortcuts).personalShortcuts ?? []
        // "Try it": a GET, since it changes nothing (the phrase is resolved, never run).
        var tried: PhraseResolution?
        if let phrase = visit.request.uri.queryParameters["try"].map(String.init), !phrase.isEmpty {
            tried = try await ask(.resolve(String(phrase.prefix(300)))).resolution
        }
        return html(Pages.shortcuts(shortcuts, tried: tried, visit: visit, message: visit.request.uri.queryParameters["done"].map(String.init)))
    }

    func editPage(_ visit: Visit) async throws -> Response {
        guard let name = visit.request.uri.queryParameters["name"].map(String.init) else {
            return html(Pages.edit(text: Pages.newShortcutTemplate, problems: [], visit: visit, original: nil))
        }
        // The file is the one the daemon lists under that name, never a path from the request.
        let shortcuts = try await ask(.personalShortcuts).personalShortcuts ?? []
        guard let shortcut = shortcuts.first(where: { $0.name == name }) else {
            return html(Pages.message("No shortcut named \"\(name)\".", visit: visit), status: .notFound)
        }
        let text = (try? String(contentsOfFile: shortcut.file, encoding: .utf8)) ?? ""
        return html(Pages.edit(text: text, problems: [], visit: visit, original: name))
    }

    func saveShortcut(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let text = (fields["text"] ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        let original = fields["original"].flatMap { $0.isEmpty ? nil : $0 }
        try FileManager.default.createDirectory(at: uploadFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: uploadFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: uploadFile) }
        // The daemon's own check, as `parley shortcuts add` runs it.
        let response = await handler.handle(.addShortcut(uploadFile.path))
        guard response.ok else {
            let problems = ShortcutProblems.parse(response.error ?? "refused", file: uploadFile.path)
            return html(Pages.edit(text: text, problems: problems, visit: visit, original: original), status: .unprocessableContent)
        }
        let message = response.message ?? "Saved."
        logger.notice("web: shortcut saved", metadata: ["message": "\(message)"])
        return Self.redirect("/shortcuts?done=" + (message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
    }

    func deleteShortcut(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let response = await handler.handle(.removeShortcut(fields["name"] ?? ""))
        let message = response.ok ? response.message ?? "Removed." : response.error ?? "refused"
        return Self.redirect("/shortcuts?done=" + (message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
    }

    func appsPage(_ visit: Visit) async throws -> Response {
        let apps = try await ask(.apps).apps ?? []
        let phrases = try await ask(.shortcuts).shortcuts ?? []
        return html(Pages.apps(apps, phrases: phrases, visit: visit))
    }

    func settingsPage(_ visit: Visit, message: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        html(Pages.settings(settings?.current(), file: settings?.path, message: message, visit: visit), status: status)
    }

    func saveSettings(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        guard let settings else {
            return try await settingsPage(visit, message: "parleyd runs on its defaults, without a configuration file to write to.", status: .conflict)
        }
        var changes: [(SettingsFile.Key, String)] = []
        for key in SettingsFile.Key.allCases {
            if let value = fields[key.rawValue] { changes.append((key, value)) }
        }
        do {
            try settings.apply(changes)
            logger.notice("web: settings written", metadata: ["file": "\(settings.path)", "keys": "\(changes.map(\.0.rawValue))"])
            return try await settingsPage(visit, message: "Saved to \(settings.path). parleyd uses them from its next start.")
        } catch {
            return try await settingsPage(visit, message: "Not saved: \(error)", status: .unprocessableContent)
        }
    }

    func historyPage(_ visit: Visit, message: String?) async throws -> Response {
        let donations = try await ask(.donations(app: nil, limit: 500)).donations ?? []
        let status = try await ask(.status).status
        return html(Pages.history(donations, kept: status?.keptRecordings, transform: status?.roomTransform, message: message, visit: visit))
    }

    func forget(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let value = fields["value"] ?? ""
        let scope: ForgetScope
        switch fields["scope"] {
        case "row":
            guard let id = Int64(value) else { return try await historyPage(visit, message: "Not forgotten: \"\(value)\" is not a row number.") }
            scope = .row(id)
        case "group": scope = .group(value)
        case "app": scope = .app(value)
        case "all":
            guard fields["confirm"] == "yes" else { return try await historyPage(visit, message: "Tick the box to forget everything.") }
            scope = .all
        default: return try await historyPage(visit, message: "Not forgotten: say what (one, a group, an app or all).")
        }
        // The voice path's own deletion ("forget my history" ends in the same request).
        let response = await handler.handle(.forgetDonations(scope))
        return try await historyPage(visit, message: response.ok ? response.message : response.error)
    }

    func logsPage(_ visit: Visit) async throws -> Response {
        let filter = visit.request.uri.queryParameters["q"].map(String.init) ?? ""
        let level = visit.request.uri.queryParameters["level"].map(String.init) ?? ""
        let lines = try await ask(.logs(limit: 1_000)).logs ?? []
        let shown = lines.filter { line in
            (filter.isEmpty || line.localizedCaseInsensitiveContains(filter))
                && (level.isEmpty || line.hasPrefix(level.uppercased() + " "))
        }
        return html(Pages.logs(Array(shown.suffix(300).reversed()), filter: filter, level: level, visit: visit))
    }

    func tokensPage(_ visit: Visit, message: String?) async throws -> Response {
        html(Pages.tokens(sessions.list(), current: visit.session.map(SessionStore.id(ofToken:)), message: message, visit: visit))
    }

    func revoke(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let id = fields["id"] ?? ""
        let revoked = try sessions.revoke(id: id)
        logger.notice("web: pairing revoked", metadata: ["id": "\(id)", "found": "\(revoked)"])
        if revoked, let session = visit.session, SessionStore.id(ofToken: session) == id {
            var response = Self.redirect("/pair")
            response.headers[.setCookie] = RequestRules.clearedCookie
            return response
        }
        return try await tokensPage(visit, message: revoked ? "Revoked." : "No pairing with id \(id).")
    }
}

/// `file:line:column: reason` lines of a refused shortcut, by line.
enum ShortcutProblems {
    struct Problem: Equatable { var line: Int?; var reason: String }

    static func parse(_ text: String, file: String) -> [Problem] {
        text.split(separator: "\n").map { raw in
            var line = String(raw)
            if line.hasPrefix(file + ":") { line.removeFirst(file.count + 1) }
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, let number = Int(parts[0]), Int(parts[1]) != nil {
                return Problem(line: number, reason: parts[2].trimmingCharacters(in: .whitespaces))
            }
            return Problem(line: nil, reason: line)
        }
    }
}
