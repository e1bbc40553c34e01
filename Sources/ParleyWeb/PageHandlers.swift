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
        return html(Pages.status(status, heard: Self.lastHeard(logs), settings: settings?.current(),
                                 level: microphoneLevel.map { Self.decibels($0()) }, visit: visit))
    }

    /// The newest lines about what was heard and what became of it: heard,
    /// rejected (at log_level debug), not understood, performed.
    static func lastHeard(_ logs: [String]) -> [String] {
        let marks = ["parley.listen: heard", "parley.listen: rejected", "parley.listen: woken", "parley.engine: resolved", "not understood",
                     "parleyd: performed", "parley.engine: performed", "performed intent="]
        return Array(logs.filter { line in marks.contains { line.contains($0) } }.suffix(5).reversed())
    }

    /// Server-Sent Events while the page is open: the microphone's level
    /// every `levelInterval` (a quarter second: one atomic read of what the
    /// capture thread stored), the rest of the state every fourth time.
    /// Nothing runs while nobody has it open; a stream ends after about ten
    /// minutes (the browser reconnects) and at the daemon's stop.
    func events() -> Response {
        let (handler, level, interval) = (self.handler, self.microphoneLevel, self.levelInterval)
        // The loop lives in `stream` (a plain async function): as one closure
        // Swift 6.2's type checker, the image's compiler, gave up on it.
        let body = ResponseBody { writer in
            try await Self.stream(to: &writer, handler: handler, level: level, interval: interval)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    private static func stream(to writer: inout any ResponseBodyWriter, handler: any ControlHandling,
                               level: (@Sendable () -> Int)?, interval: Duration) async throws {
        for tick in 0..<2_400 {
            if Task.isCancelled || Task.isShuttingDownGracefully { break }
            var payload: [String: String] = [:]
            if let level { payload["level"] = String(decibels(level())) }
            if tick % 4 == 0 {
                let state = await statePayload(handler)
                payload.merge(state) { _, new in new }
            }
            if !payload.isEmpty {
                let json = (try? JSONEncoder().encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
                try await writer.write(ByteBuffer(string: "data: \(json)\n\n"))
            }
            try? await Task.sleep(for: interval)
        }
        try await writer.finish(nil)
    }

    /// The status fields the page updates live.
    private static func statePayload(_ handler: any ControlHandling) async -> [String: String] {
        let status = await handler.handle(.status).status
        let heard: String = lastHeard(await handler.handle(.logs(limit: 300)).logs ?? []).first ?? ""
        let speaking: Bool = status?.audio.speaking ?? false
        var payload: [String: String] = [:]
        payload["state"] = status?.state ?? "unknown"
        payload["led"] = status?.led ?? ""
        payload["audio"] = status?.audio.state ?? ""
        payload["speaking"] = speaking ? "yes" : "no"
        payload["recognitions"] = String(status?.recognitions ?? 0)
        payload["last"] = status?.lastIntents.first ?? ""
        payload["heard"] = heard
        return payload
    }

    /// A level 0...32767 in decibels below full scale, rounded, from -90 (silence) to 0.
    static func decibels(_ level: Int) -> Int {
        guard level > 0 else { return -90 }
        return max(-90, Int((20 * log10(Double(min(level, 32_767)) / 32_767)).rounded()))
    }

    func shortcutsPage(_ visit: Visit) async throws -> Response {
        let shortcuts = try await ask(.personalShortcuts).personalShortcuts ?? []
        // "Try it": a GET, since it changes nothing (the phrase is resolved, never run).
        var tried: PhraseResolution?
        // A form's GET sends spaces as "+", which the query's percent-decoding leaves.
        if let phrase = visit.request.uri.queryParameters["try"].map({ String($0).replacingOccurrences(of: "+", with: " ") }), !phrase.isEmpty {
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

    /// Turns a shortcut off or on, named as the daemon lists it (never a file).
    func switchShortcut(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let name = fields["name"] ?? ""
        let response = await handler.handle(.setShortcutEnabled(name: name, enabled: fields["on"] == "yes"))
        let message = response.ok ? response.message ?? "Done." : response.error ?? "refused"
        logger.notice("web: shortcut switched", metadata: ["name": "\(name)", "on": "\(fields["on"] ?? "")", "ok": "\(response.ok)"])
        return Self.redirect("/shortcuts?done=" + (message.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
    }

    func appsPage(_ visit: Visit, message: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        let apps = try await ask(.apps).apps ?? []
        let phrases = try await ask(.shortcuts).shortcuts ?? []
        // A daemon without the apps folder's service lists no external apps.
        let external = await handler.handle(.externalApps).externalApps ?? []
        let shipped = await handler.handle(.installApp(name: nil)).shippedApps ?? []
        return html(Pages.apps(apps, phrases: phrases, external: external, shipped: shipped, message: message, visit: visit),
                    status: status)
    }

    /// Installs an app that comes with Parley, by the folder name the daemon lists.
    func installApp(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let name = fields["name"] ?? ""
        let response = await handler.handle(.installApp(name: name))
        logger.notice("web: app install", metadata: ["app": "\(name)", "ok": "\(response.ok)"])
        return try await appsPage(visit, message: response.ok ? response.message : response.error,
                                  status: response.ok ? .ok : .unprocessableContent)
    }

    /// Turns an external app off or on by the identifier the daemon lists.
    func switchApp(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let id = fields["id"] ?? ""
        let response = await handler.handle(.setAppEnabled(identifier: id, enabled: fields["on"] == "yes"))
        logger.notice("web: app switched", metadata: ["app": "\(id)", "on": "\(fields["on"] ?? "")", "ok": "\(response.ok)"])
        return try await appsPage(visit, message: response.ok ? response.message : response.error,
                                  status: response.ok ? .ok : .unprocessableContent)
    }

    func settingsPage(_ visit: Visit, message: String?, status: HTTPResponse.Status = .ok) async throws -> Response {
        html(Pages.settings(settings?.current(), file: settings.map { "\($0.overlay) (over \($0.path))" }, message: message, zones: Self.zoneNames,
                            visit: visit, update: await updateSection(visit)), status: status)
    }

    /// The system's time zone names, for the field's suggestions (read once).
    static let zoneNames: [String] = {
        guard let text = try? String(contentsOfFile: ConfigLoader.zoneinfo + "/tzdata.zi", encoding: .utf8) else { return [] }
        // tzdata.zi: "Z Europe/Paris …" zones and "L target Alias" links.
        return text.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: " ")
            if parts.count >= 2, parts[0] == "Z" { return String(parts[1]) }
            if parts.count >= 3, parts[0] == "L" { return String(parts[2]) }
            return nil
        }.filter { ConfigLoader.timeZoneProblem($0) == nil }.sorted()
    }()

    func saveSettings(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        guard let settings else {
            return try await settingsPage(visit, message: "parleyd runs on its defaults, without a configuration file to write to.", status: .conflict)
        }
        var changes: [(SettingsFile.Key, String)] = []
        for key in SettingsFile.Key.allCases {
            if let value = fields[key.rawValue] { changes.append((key, value)) }
        }
        let before = settings.current() ?? [:]
        do {
            let config = try settings.apply(changes)
            let after = settings.current() ?? [:]
            let changed = Set(SettingsFile.Key.allCases.filter { before[$0] != after[$0] }.map(\.rawValue))
            logger.notice("web: settings written", metadata: ["file": "\(settings.overlay)", "changed": "\(changed.sorted())"])
            let outcome = await live?.apply(config, keys: changed) ?? (applied: [], failed: [:])
            return try await settingsPage(visit, message: Self.settingsMessage(file: settings.overlay, changed: changed, outcome: outcome))
        } catch {
            return try await settingsPage(visit, message: "Not saved: \(error)", status: .unprocessableContent)
        }
    }

    /// What became of a save: in use now, waiting for the next start, or refused.
    static func settingsMessage(file: String, changed: Set<String>, outcome: (applied: [String], failed: [String: String])) -> String {
        guard !changed.isEmpty else { return "Saved to \(file); nothing changed." }
        var parts = ["Saved to \(file)."]
        if !outcome.applied.isEmpty { parts.append("In use now: \(outcome.applied.sorted().joined(separator: ", ")).") }
        let waiting = changed.filter { LiveSettings.needRestart[$0] != nil }.sorted()
        if !waiting.isEmpty { parts.append("From parleyd's next start: \(waiting.joined(separator: ", ")).") }
        for key in outcome.failed.keys.sorted() { parts.append("\(key) not in use yet: \(outcome.failed[key]!).") }
        return parts.joined(separator: " ")
    }

    func historyPage(_ visit: Visit, message: String?) async throws -> Response {
        let donations = try await ask(.donations(app: nil, limit: 500)).donations ?? []
        let status = try await ask(.status).status
        // Without room adaptation there is nothing kept to list.
        let recordings = await handler.handle(.keptRecordings).keptRecordings
        return html(Pages.history(donations, kept: status?.keptRecordings, recordings: recordings, keepAudio: status?.keepAudio,
                                  transform: status?.roomTransform, message: message, visit: visit))
    }

    /// Deletes one kept recording by the id the daemon lists, or all of them with the transform.
    func deleteKept(_ visit: Visit, _ fields: [String: String]) async throws -> Response {
        let response: ControlResponse
        if fields["scope"] == "all" {
            guard fields["confirm"] == "yes" else { return try await historyPage(visit, message: "Tick the box to delete every kept recording.") }
            response = await handler.handle(.forgetKeptRecordings)
        } else {
            response = await handler.handle(.deleteKeptRecording(fields["id"] ?? ""))
        }
        logger.notice("web: kept audio deleted", metadata: ["scope": "\(fields["scope"] ?? "one")", "ok": "\(response.ok)"])
        return try await historyPage(visit, message: response.ok ? response.message : response.error)
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
        html(Pages.tokens(sessions.list(at: now()), current: visit.session.map(SessionStore.id(ofToken:)), message: message, visit: visit))
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
