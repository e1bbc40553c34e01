import Foundation
import ParleyCore
import ParleyConfiguration
import ParleyControl
import ParleyDaemon

/// The page's HTML, rendered on the server: every page works without
/// JavaScript; only the status's live part uses it (live.js, Server-Sent Events).
enum Pages {
    static func esc(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    static let sections = [("/", "Status"), ("/shortcuts", "Shortcuts"), ("/apps", "Apps"), ("/settings", "Settings"),
                           ("/history", "History"), ("/logs", "Logs"), ("/tokens", "Browsers")]

    static func layout(_ title: String, nav: Bool = true, script: Bool = false, _ body: String) -> String {
        let links = nav ? "<nav>" + sections.map { "<a href=\"\($0.0)\">\($0.1)</a>" }.joined() + "</nav>" : ""
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(esc(title)) · Parley</title><link rel="stylesheet" href="/style.css">
            \(script ? "<script src=\"/live.js\" defer></script>" : "")</head>
            <body><header><strong>Parley</strong> \(links)</header><main><h1>\(esc(title))</h1>
            \(body)
            </main></body></html>
            """
    }

    /// A form that changes something: POST with the session's anti-forgery token.
    static func form(_ action: String, _ token: String, id: String? = nil, _ inner: String) -> String {
        "<form method=\"post\" action=\"\(action)\"\(id.map { " id=\"\($0)\"" } ?? "")><input type=\"hidden\" name=\"form_token\" value=\"\(esc(token))\">\(inner)</form>"
    }

    static func note(_ message: String?) -> String {
        message.map { "<p class=\"note\" id=\"message\">\(esc($0))</p>" } ?? ""
    }

    static func message(_ text: String, visit: WebPage.Visit) -> String { layout("Parley", note(text)) }

    static func pair(message: String?, paired: Bool) -> String {
        layout("Pair this browser", nav: paired, """
            \(note(message))
            <p>The speaker proves it is you: it says a six-digit code aloud (its lights blink while it does). Only someone in the room hears it.</p>
            <form method="post" action="/pair/code"><button id="ask-code">Ask the speaker for a code</button></form>
            <form method="post" action="/pair"><label>Code <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required></label>
            <button id="pair">Pair</button></form>
            """)
    }

    static func status(_ s: DaemonStatus?, heard: [String], settings: [SettingsFile.Key: String]?, level: Int?, visit: WebPage.Visit) -> String {
        guard let s else { return layout("Status", note("The daemon did not answer.")) }
        var rows: [(String, String, String)] = [
            ("State", "state", s.state), ("Lights", "led", s.led ?? "no board"),
            ("Speaking", "speaking", (s.audio.speaking ?? false) ? "yes" : "no"),
            ("Microphone", "audio", s.audio.state + (s.audio.problem.map { " (\($0))" } ?? "")),
            ("Volume", "volume", settings?[.volume].map { "\($0) %" } ?? "100 % (default)"),
            ("Wake word", "wake", settings.map { "\($0[.wakeName] ?? "") (sensitivity \($0[.sensitivity] ?? ""))" } ?? "default"),
            ("Understood since start", "recognitions", String(s.recognitions)),
            ("Last performed", "last", s.lastIntents.first ?? "nothing yet"),
        ]
        // The privacy rule: the page says when audio last left the device and why.
        if let link = s.homeAssistant { rows.append(("Home Assistant satellite", "home-assistant", link)) }
        if let handler = s.homeAssistantHandler { rows.append(("Home Assistant handler", "home-assistant-handler", handler)) }
        var table = rows.map { "<tr><th>\($0.0)</th><td id=\"\($0.1)\">\(esc($0.2))</td></tr>" }.joined()
        if let level {
            // The meter spans -60 dB (a quiet room) to 0 dB (full scale); live.js moves it.
            table += "<tr><th>Microphone level</th><td><meter id=\"mic-meter\" min=\"-60\" max=\"0\" low=\"-40\" high=\"-6\" value=\"\(level)\"></meter> "
                + "<span id=\"mic-level\">\(level) dB</span></td></tr>"
        }
        table += "<tr><th>Time zone</th><td id=\"time-zone\">\(esc(s.timeZone ?? "the system's"))</td></tr>"
        let lines = heard.isEmpty ? "<li>Nothing heard yet.</li>" : heard.map { "<li>\(esc($0))</li>" }.joined()
        return layout("Status", script: true, """
            <table>\(table)</table>
            <h2>Last heard</h2><p class="hint">What the microphone caught and what became of it, newest first (rejections are logged at log_level debug).</p>
            <ul id="heard" class="log">\(lines)</ul>
            <p class="hint">Parley \(esc(s.version)) · board \(esc(s.board)) · \(s.grammarSize) phrases · \(s.donations) donations</p>
            """)
    }

    static let newShortcutTemplate = """
        name: Good morning
        phrases: [good morning]
        actions:
          - speak: Good morning!

        """

    static func shortcuts(_ list: [PersonalShortcut], tried: PhraseResolution?, visit: WebPage.Visit, message: String?) -> String {
        let result = tried.map { r in
            let values = r.values.keys.sorted().map { "\($0)=\(r.values[$0]!)" }.joined(separator: " ")
            return "<p class=\"note\" id=\"try-result\">“\(esc(r.phrase))” → \(esc(r.target))\(values.isEmpty ? "" : " (" + esc(values) + ")")\(r.matched ? ". Not run." : ".")</p>"
        } ?? ""
        let items: String = list.map { s -> String in
            let on = s.enabled ?? true
            let toggle = form("/shortcuts/switch", visit.formToken, """
                <input type="hidden" name="name" value="\(esc(s.name))"><input type="hidden" name="on" value="\(on ? "no" : "yes")">\
                <button id="\(on ? "disable" : "enable")-\(slug(s.name))">\(on ? "Turn off" : "Turn on")</button>
                """)
            return """
            <li class="card\(on ? "" : " off")" id="shortcut-\(slug(s.name))"><strong>\(esc(s.name))</strong>\(on ? "" : " <em class=\"state-off\">off: not understood, no triggers</em>")
            <div>\(s.phrases.map { "“\(esc($0))”" }.joined(separator: ", "))\(s.triggers.isEmpty ? "" : " · " + esc(s.triggers.joined(separator: ", ")))</div>
            <div class="hint">\(esc(s.summary))</div>
            <a href="/shortcuts/edit?name=\(s.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")">Edit</a>
            \(toggle)
            \(form("/shortcuts/delete", visit.formToken, "<input type=\"hidden\" name=\"name\" value=\"\(esc(s.name))\"><button class=\"danger\">Delete</button>"))</li>
            """
        }.joined()
        return layout("Shortcuts", """
            \(note(message))
            <form method="get" action="/shortcuts"><label>Try it: what would this start? <input name="try" id="try-phrase" placeholder="order tomato soup with soup chef"></label><button id="try-it">Try it</button></form>
            \(result)
            <p><a class="button" id="new-shortcut" href="/shortcuts/edit">New shortcut</a></p>
            <ul id="shortcut-list" class="cards">\(list.isEmpty ? "<li>No shortcuts yet.</li>" : items)</ul>
            <p class="hint">The format: docs/shortcuts.md. A shortcut that orders still waits for the button.</p>
            """)
    }

    static func edit(text: String, problems: [ShortcutProblems.Problem], visit: WebPage.Visit, original: String?) -> String {
        var listing = ""
        if !problems.isEmpty {
            let byLine = Dictionary(grouping: problems.filter { $0.line != nil }, by: { $0.line! })
            let lines = text.components(separatedBy: "\n")
            listing = "<h2>Problems</h2><ol class=\"listing\" id=\"problems\">" + lines.enumerated().map { index, line in
                let own = byLine[index + 1] ?? []
                let marks = own.map { "<span class=\"problem\">line \(index + 1): \(esc($0.reason))</span>" }.joined()
                return "<li\(own.isEmpty ? "" : " class=\"bad\" id=\"line-\(index + 1)\"")><code>\(esc(line))</code>\(marks)</li>"
            }.joined() + "</ol>"
            let loose = problems.filter { $0.line == nil }
            if !loose.isEmpty { listing += "<ul class=\"problem\">" + loose.map { "<li>\(esc($0.reason))</li>" }.joined() + "</ul>" }
        }
        return layout(original.map { "Edit \($0)" } ?? "New shortcut", """
            \(listing)
            \(form("/shortcuts/save", visit.formToken, id: "shortcut-form", """
            <input type="hidden" name="original" value="\(esc(original ?? ""))">
            <textarea name="text" id="shortcut-text" rows="16" spellcheck="false">\(esc(text))</textarea>
            <button id="save-shortcut">Check and save</button>
            """))
            """)
    }

    /// An id for an element from a name ("Coffee break" -> "coffee-break").
    static func slug(_ name: String) -> String {
        name.lowercased().map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
    }

    static func apps(_ apps: [AppSummary], phrases: [ParleyControl.ShortcutSummary], external: [ExternalAppStatus],
                     shipped: [ShippedAppSummary] = [], message: String?, visit: WebPage.Visit) -> String {
        let handlers = Dictionary(external.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // An app turned off is not in the catalog any more; it is listed from the apps folder.
        let off = external.filter { !$0.enabled }.map { AppSummary(name: $0.name, synonyms: [], intents: [], primary: false,
                                                                     identifier: $0.identifier, external: true) }
        let cards: String = (apps + off).map { app -> String in
            let own = phrases.filter { $0.app == app.name }
            return """
                <li class="card"><strong>\(esc(app.name))</strong>\(app.primary ? " <em>primary</em>" : "")\((app.external ?? false) ? " <em>external</em>" : "")
                <div class="hint">\(esc(app.intents.joined(separator: ", ")))</div>
                <ul>\(own.prefix(12).map { "<li>“\(esc($0.phrase))” → \(esc($0.intent))</li>" }.joined())\(own.count > 12 ? "<li>… \(own.count - 12) more</li>" : "")</ul>
                \(handlers[app.name].map { handler($0, visit: visit) } ?? "")</li>
                """
        }.joined()
        return layout("Apps", """
            \(note(message))
            <ul class="cards" id="app-list">\(cards)</ul>
            <p class="hint">External apps are folders in the apps folder. One turned off stays installed: its handler is stopped and its phrases are not understood until it is turned on again (also <code>parley apps off NAME</code>).</p>
            \(shippedApps(shipped, visit: visit))
            """)
    }

    /// The apps that come with Parley, each installed or with its Install button.
    static func shippedApps(_ shipped: [ShippedAppSummary], visit: WebPage.Visit) -> String {
        guard !shipped.isEmpty else { return "" }
        let rows = shipped.map { app -> String in
            let id = slug(app.folder)
            let action = app.installed ? "<span class=\"hint\" id=\"shipped-installed-\(id)\">installed</span>"
                : app.problem.map { "<span class=\"hint\" id=\"shipped-problem-\(id)\">not on this device: \(esc($0))</span>" } ?? form("/apps/install", visit.formToken, """
                    <input type="hidden" name="name" value="\(esc(app.folder))"><button id="app-install-\(id)">Install</button>
                    """)
            return "<li><strong>\(esc(app.name))</strong> <code>\(esc(app.folder))</code> \(action)</li>"
        }.joined()
        return """
            <h2>Apps that come with Parley</h2>
            <ul id="shipped-apps">\(rows)</ul>
            <p class="hint">None runs until it is installed (also <code>parley apps install NAME</code>): it is checked against the apps above, copied into the apps folder and started. What each needs (an address, a token, relays) is at the top of its manifest.yaml; Home Assistant's: docs/home-assistant.md.</p>
            """
    }

    /// An external app's handler: its state, its standard error's last lines, and the switch.
    static func handler(_ h: ExternalAppStatus, visit: WebPage.Visit) -> String {
        let id = slug(h.identifier)
        let tail = h.stderr.suffix(10).map { esc($0) }.joined(separator: "\n")
        return """
            <div class="handler">Handler: <span class="state-\(h.enabled ? h.state.split(separator: " ").first.map { String($0).trimmingCharacters(in: .punctuationCharacters) } ?? "" : "off")" id="app-state-\(id)">\(esc(h.state))</span>\(h.restarts > 0 ? " <span class=\"hint\">\(h.restarts) restart\(h.restarts == 1 ? "" : "s")</span>" : "")
            \(tail.isEmpty ? "<div class=\"hint\">Nothing on standard error.</div>" : "<details><summary>Standard error, last lines</summary><pre class=\"log\" id=\"app-stderr-\(id)\">\(tail)</pre></details>")
            \(form("/apps/switch", visit.formToken, """
            <input type="hidden" name="id" value="\(esc(h.identifier))"><input type="hidden" name="on" value="\(h.enabled ? "no" : "yes")">\
            <button class="\(h.enabled ? "danger" : "")" id="app-\(h.enabled ? "off" : "on")-\(id)">\(h.enabled ? "Turn off" : "Turn on")</button>
            """))</div>
            """
    }

    static func settings(_ values: [SettingsFile.Key: String]?, file: String?, message: String?, zones: [String], visit: WebPage.Visit,
                         update: String = "") -> String {
        guard let values, let file else {
            return layout("Settings", note(message ?? "parleyd runs on its defaults, without a configuration file; start it with --config FILE to change settings here.") + update)
        }
        let fields: [(SettingsFile.Key, String, String)] = [
            (.volume, "Volume (%)", "0…200"), (.wakeName, "Wake word", "one to three words"),
            (.sensitivity, "Wake sensitivity", "0…1"), (.voiceName, "Voice", "an espeak-ng voice, e.g. en-us"),
            (.rate, "Speech rate (words a minute)", "80…450"), (.board, "Board", "sim, pi4, …"),
            (.timeZone, "Time zone", "a name from /usr/share/zoneinfo, e.g. Europe/Paris; empty: the system's. Automations \"at 7:00\" and spoken times follow it"),
        ]
        let inputs: String = fields.map { key, label, hint -> String in
            let restart = LiveSettings.needRestart[key.rawValue].map { "<span class=\"restart\" id=\"restart-\(slug(key.rawValue))\">Needs a restart of parleyd: \(esc($0)).</span>" } ?? ""
            let list = key == .timeZone && !zones.isEmpty ? " list=\"zones\" autocomplete=\"off\"" : ""
            return "<label>\(esc(label)) <input name=\"\(key.rawValue)\" id=\"\(key.rawValue.replacingOccurrences(of: ".", with: "-").replacingOccurrences(of: "_", with: "-"))\" value=\"\(esc(values[key] ?? ""))\"\(list)><span class=\"hint\">\(esc(hint))</span>\(restart)</label>"
        }.joined()
        let options: String = zones.map { "<option value=\"\(esc($0))\">" }.joined()
        let datalist: String = zones.isEmpty ? "" : "<datalist id=\"zones\">\(options)</datalist>"
        return layout("Settings", """
            \(note(message))
            \(form("/settings", visit.formToken, id: "settings-form", "\(inputs)\(datalist)<button id=\"save-settings\">Save</button>"))
            <p class="hint">Written to \(esc(file)) with the same checks as parleyd's start. The voice, its rate and loudness, the time zone, the wake word and its sensitivity are in use at once; the board says so where it waits for a restart.</p>
            \(update)
            """)
    }

    static func history(_ donations: [Donation], kept: Int?, recordings: [KeptRecordingSummary]?, keepAudio: Bool?, transform: Date?,
                        message: String?, visit: WebPage.Visit) -> String {
        let byApp = Dictionary(grouping: donations, by: \.app)
        let groups = byApp.keys.sorted().map { app in
            let rows = byApp[app]!.map { d in
                let parameters = d.parameters.keys.sorted().map { "\($0)=\(d.parameters[$0]!)" }.joined(separator: " ")
                let group = d.groupIdentifier.map { g in form("/history/forget", visit.formToken, "<input type=\"hidden\" name=\"scope\" value=\"group\"><input type=\"hidden\" name=\"value\" value=\"\(esc(g))\"><button>Forget group \(esc(g))</button>") } ?? ""
                return "<li>\(esc(d.intent)) \(esc(parameters)) <span class=\"hint\">\(esc(ISO8601DateFormatter().string(from: d.date)))</span>"
                    + form("/history/forget", visit.formToken, "<input type=\"hidden\" name=\"scope\" value=\"row\"><input type=\"hidden\" name=\"value\" value=\"\(d.rowID ?? 0)\"><button>Forget</button>") + group + "</li>"
            }.joined()
            return "<li class=\"card\"><strong>\(esc(app))</strong> (\(byApp[app]!.count))"
                + form("/history/forget", visit.formToken, "<input type=\"hidden\" name=\"scope\" value=\"app\"><input type=\"hidden\" name=\"value\" value=\"\(esc(app))\"><button class=\"danger\">Forget all of \(esc(app))</button>")
                + "<ul>\(rows)</ul></li>"
        }.joined()
        let audio = kept.map { "\($0) recording\($0 == 1 ? "" : "s") of confirmed commands kept for room adaptation" } ?? "no room adaptation"
        let keeping = keepAudio.map { $0 ? " Keeping is on (adaptation.keep_audio)." : " Keeping is off (adaptation.keep_audio: false): nothing new is kept." } ?? ""
        let formatter = ISO8601DateFormatter()
        let listed = (recordings ?? []).reversed().map { r in
            "<li id=\"kept-\(esc(r.id))\">“\(esc(r.words))” <span class=\"hint\">\(String(format: "%.1f", r.seconds)) s\(r.date.map { " · " + esc(formatter.string(from: $0)) } ?? "")</span>"
                + form("/history/kept/delete", visit.formToken, "<input type=\"hidden\" name=\"id\" value=\"\(esc(r.id))\"><button class=\"danger\" id=\"delete-kept-\(esc(r.id))\">Delete</button>") + "</li>"
        }.joined()
        let keptList = recordings.map { list in
            list.isEmpty ? "<p class=\"hint\" id=\"kept-list\">No recordings kept.</p>" : """
                <ul class="cards" id="kept-list">\(listed)</ul>
                \(form("/history/kept/delete", visit.formToken, id: "delete-all-kept", """
                <input type="hidden" name="scope" value="all"><label><input type="checkbox" name="confirm" value="yes" id="confirm-kept"> Delete every kept recording and the room transform made from them</label>
                <button class="danger" id="delete-all-recordings">Delete all recordings</button>
                """))
                """
        } ?? ""
        return layout("History and privacy", """
            \(note(message))
            <p id="donation-count">\(donations.count) donation\(donations.count == 1 ? "" : "s") (what suggestions learn from).</p>
            <ul class="cards" id="donations">\(groups)</ul>
            <h2>Room adaptation</h2><p id="kept">\(esc(audio))\(transform.map { "; transform made \(esc(ISO8601DateFormatter().string(from: $0)))" } ?? "").\(esc(keeping))</p>
            \(keptList)
            \(form("/history/forget", visit.formToken, id: "forget-all", """
            <input type="hidden" name="scope" value="all"><label><input type="checkbox" name="confirm" value="yes" id="confirm-all"> Forget everything: every donation, the kept audio and the room transform</label>
            <button class="danger" id="forget-everything">Forget everything</button>
            """))
            """)
    }

    static func logs(_ lines: [String], filter: String, level: String, visit: WebPage.Visit) -> String {
        let levels = ["", "trace", "debug", "info", "notice", "warning", "error", "critical"]
        let options = levels.map { "<option value=\"\($0)\"\($0 == level ? " selected" : "")>\($0.isEmpty ? "any level" : $0)</option>" }.joined()
        return layout("Logs", """
            <form method="get" action="/logs"><input name="q" value="\(esc(filter))" placeholder="filter"><select name="level">\(options)</select><button>Show</button></form>
            <ul class="log" id="log-lines">\(lines.map { "<li>\(esc($0))</li>" }.joined())</ul>
            """)
    }

    static func tokens(_ list: [WebTokenSummary], current: String?, message: String?, visit: WebPage.Visit) -> String {
        let formatter = ISO8601DateFormatter()
        let items = list.map { t in
            "<li class=\"card\"><code>\(esc(t.id))</code>\(t.id == current ? " <em>this browser</em>" : "") <div class=\"hint\">paired \(esc(formatter.string(from: t.created))) · last used \(esc(formatter.string(from: t.lastUsed))) · ends if unused until \(esc(formatter.string(from: t.lastUsed.addingTimeInterval(SessionStore.maximumIdle)))) · \(esc(t.browser))</div>"
                + form("/tokens/revoke", visit.formToken, "<input type=\"hidden\" name=\"id\" value=\"\(esc(t.id))\"><button class=\"danger\" id=\"revoke-\(esc(t.id))\">Revoke</button>") + "</li>"
        }.joined()
        return layout("Paired browsers", "\(note(message))<ul class=\"cards\" id=\"tokens\">\(items)</ul><p class=\"hint\">A browser unused for 30 days must pair again. Also: <code>parley web tokens</code>.</p>")
    }
}

enum Assets {
    static let css = """
        *{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,sans-serif;color:#1d232a;background:#f5f6f4}
        header{background:#24413a;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center}
        nav{display:flex;flex-wrap:wrap;gap:.3em .9em}nav a{color:#d9efe6;text-decoration:none}
        main{max-width:52em;margin:auto;padding:1em}h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.1em}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .4em;border-bottom:1px solid #dde}th{width:45%;font-weight:600}
        .cards{list-style:none;padding:0}.card{background:#fff;border:1px solid #dde;border-radius:8px;padding:.7em;margin:.6em 0}
        form{margin:.4em 0}label{display:block;margin:.5em 0}input,select,textarea{font:inherit;padding:.4em;width:100%;max-width:30em}
        input[type=checkbox]{width:auto}textarea{max-width:none;font-family:ui-monospace,monospace;font-size:14px}
        button,.button{font:inherit;background:#2f6b5b;color:#fff;border:0;border-radius:6px;padding:.45em .9em;margin:.2em 0;display:inline-block;text-decoration:none}
        .danger{background:#9b2d2d}.hint{color:#5a6570;font-size:.9em;display:block}.note{background:#fff7d6;border:1px solid #e8d48a;padding:.5em;border-radius:6px}
        .log{font-family:ui-monospace,monospace;font-size:13px;padding-left:1em;word-break:break-all}
        .off{opacity:.75;border-style:dashed}.state-off,.state-stopped,.state-restarting{color:#9b2d2d;font-weight:600}.state-running{color:#2f6b5b;font-weight:600}
        .restart{color:#8a5a00;font-size:.9em;display:block}meter{width:12em;vertical-align:middle}pre.log{white-space:pre-wrap;max-height:14em;overflow:auto}
        .listing{font-family:ui-monospace,monospace;font-size:13px}.listing .bad{background:#fde4e4}.problem{color:#9b2d2d;display:block;font-family:system-ui,sans-serif}
        """

    /// The live part of the status page: the state as it changes.
    static let js = """
        "use strict";
        (function () {
          if (!window.EventSource || !document.getElementById("state")) return;
          var source = new EventSource("/events");
          source.onmessage = function (event) {
            var data = JSON.parse(event.data);
            if (data.level !== undefined) {
              var meter = document.getElementById("mic-meter"), text = document.getElementById("mic-level");
              if (meter) meter.value = Number(data.level);
              if (text) text.textContent = data.level + " dB";
            }
            ["state", "led", "speaking", "recognitions", "last"].forEach(function (key) {
              var cell = document.getElementById(key);
              if (cell && data[key] !== undefined && data[key] !== "") cell.textContent = data[key];
            });
            var heard = document.getElementById("heard");
            if (heard && data.heard && heard.firstElementChild && heard.firstElementChild.textContent !== data.heard) {
              var item = document.createElement("li"); item.textContent = data.heard; heard.insertBefore(item, heard.firstChild);
            }
          };
        })();
        """
}
