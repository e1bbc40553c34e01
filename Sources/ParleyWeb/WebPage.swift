import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ServiceLifecycle
import Synchronization

/// The speaker's page: its routes and the rules every request passes. All it
/// shows and changes goes through `handler`, the control socket's own
/// handler (``ControlHandling``), so the page and `parley` never disagree;
/// the only files it touches are its session file, one upload file in
/// `<state>/web/`, an update bundle in `<state>/update/` and the
/// configuration file the daemon was started with.
/// No path is ever taken from a request.
public final class WebPage: Sendable {
    public let handler: any ControlHandling
    public let sessions: SessionStore
    let pairing = Mutex(PairingGate())
    /// How a code is asked for (`web.pairing`).
    public enum PairingMode: String, Sendable { case spoken, button }
    let pairingMode: PairingMode
    /// With button pairing: until when a press of the device's button says a code.
    let armedUntil = Mutex(Date.distantPast)
    /// How long a request from the page waits for the press.
    static let armedFor: TimeInterval = 60
    /// Says the pairing code aloud through the daemon's speech path.
    let announce: @Sendable (String) async throws -> Void
    let settings: SettingsFile?
    /// Where a shortcut typed on the page is written to be checked (`parley shortcuts add` reads a file).
    let uploadFile: URL
    let machineName: String
    let now: @Sendable () -> Date
    let logger: Logger
    /// Puts settings written to the file in use where that needs no restart.
    let live: LiveSettings?
    /// The microphone's level (0...32767), read while a status page is open.
    let microphoneLevel: (@Sendable () -> Int)?
    /// How often the status stream sends the level; the rest of the status goes every fourth time.
    let levelInterval: Duration
    /// Software updates (Settings' upload); nil: none offered.
    let updater: Updater?
    /// The largest bundle accepted (`update.max_upload_mib`).
    let maxUploadBytes: Int
    /// One upload at a time (they share the file).
    let uploading = Mutex(false)

    public init(
        handler: any ControlHandling, webDirectory: URL, configFile: String?, machineName: String,
        announce: @escaping @Sendable (String) async throws -> Void, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }, live: LiveSettings? = nil,
        microphoneLevel: (@Sendable () -> Int)? = nil, levelInterval: Duration = .milliseconds(250),
        pairing: PairingMode = .spoken, updater: Updater? = nil, maxUploadBytes: Int = ParleyConfig.Update().maxUploadBytes
    ) {
        self.updater = updater
        self.maxUploadBytes = maxUploadBytes
        self.pairingMode = pairing
        self.live = live
        self.microphoneLevel = microphoneLevel
        self.levelInterval = levelInterval
        self.handler = handler
        self.sessions = SessionStore(directory: webDirectory)
        self.uploadFile = webDirectory.appendingPathComponent("upload.yaml")
        // webDirectory is <state>/web: the settings overlay sits in the state directory itself.
        let stateDirectory = webDirectory.deletingLastPathComponent().path
        self.settings = configFile.map { SettingsFile(path: $0, stateDirectory: stateDirectory) }
        self.machineName = machineName
        self.announce = announce
        self.logger = logger
        self.now = now
    }

    /// A request past the host check, with its session when it has one.
    struct Visit: Sendable {
        var request: Request
        var session: String?
        var formToken: String { session.map(RequestRules.formToken(forSession:)) ?? "" }
    }

    public func router() -> Router<PageContext> {
        let router = Router(context: PageContext.self)
        router.add(middleware: Guard(page: self))
        router.get("/style.css") { _, _ in Self.asset(Assets.css, type: "text/css; charset=utf-8") }
        router.get("/live.js") { _, _ in Self.asset(Assets.js, type: "text/javascript; charset=utf-8") }
        router.get("/pair") { request, _ in self.html(Pages.pair(message: nil, paired: self.session(request) != nil)) }
        router.post("/pair/code") { request, context in try await self.requestCode(request, from: context.clientAddress) }
        router.post("/pair") { request, context in try await self.pair(request, from: context.clientAddress) }
        router.get("/") { request, _ in try await self.signedIn(request) { try await self.statusPage($0) } }
        router.get("/events") { request, _ in try await self.signedIn(request) { _ in self.events() } }
        router.get("/shortcuts") { request, _ in try await self.signedIn(request) { try await self.shortcutsPage($0) } }
        router.get("/shortcuts/edit") { request, _ in try await self.signedIn(request) { try await self.editPage($0) } }
        router.post("/shortcuts/save") { request, _ in try await self.changing(request) { try await self.saveShortcut($0, $1) } }
        router.post("/shortcuts/delete") { request, _ in try await self.changing(request) { try await self.deleteShortcut($0, $1) } }
        router.post("/shortcuts/switch") { request, _ in try await self.changing(request) { try await self.switchShortcut($0, $1) } }
        router.get("/apps") { request, _ in try await self.signedIn(request) { try await self.appsPage($0, message: nil) } }
        router.post("/apps/switch") { request, _ in try await self.changing(request) { try await self.switchApp($0, $1) } }
        router.post("/apps/install") { request, _ in try await self.changing(request) { try await self.installApp($0, $1) } }
        router.get("/settings") { request, _ in try await self.signedIn(request) { try await self.settingsPage($0, message: nil) } }
        router.post("/settings") { request, _ in try await self.changing(request) { try await self.saveSettings($0, $1) } }
        router.post("/settings/update") { request, _ in try await self.uploadUpdate(request) }
        router.get("/history") { request, _ in try await self.signedIn(request) { try await self.historyPage($0, message: nil) } }
        router.post("/history/forget") { request, _ in try await self.changing(request) { try await self.forget($0, $1) } }
        router.post("/history/kept/delete") { request, _ in try await self.changing(request) { try await self.deleteKept($0, $1) } }
        router.get("/logs") { request, _ in try await self.signedIn(request) { try await self.logsPage($0) } }
        router.get("/tokens") { request, _ in try await self.signedIn(request) { try await self.tokensPage($0, message: nil) } }
        router.post("/tokens/revoke") { request, _ in try await self.changing(request) { try await self.revoke($0, $1) } }
        return router
    }

    // MARK: The rules

    /// Every request: a Host this device answers to (no DNS rebinding), and
    /// headers that keep the page out of frames and caches.
    struct Guard: RouterMiddleware {
        typealias Context = PageContext
        let page: WebPage
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let host = request.head.authority
            guard RequestRules.hostAllowed(host, machineName: page.machineName) else {
                return WebPage.plain(.misdirectedRequest, "This page answers only to the speaker's own name or address.")
            }
            var response = try await next(request, context)
            response.headers[.contentSecurityPolicy] = "default-src 'self'; frame-ancestors 'none'; form-action 'self'"
            response.headers[.xContentTypeOptions] = "nosniff"
            // same-origin, not no-referrer: under no-referrer Chromium sends "Origin: null" on
            // the page's own form posts, and the origin check below needs the real one.
            response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
            if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
            return response
        }
    }

    func session(_ request: Request) -> String? {
        guard let token = RequestRules.sessionToken(cookieHeader: request.headers[.cookie]),
            sessions.validate(token, at: now())
        else { return nil }
        return token
    }

    /// A page that needs a paired browser: others are sent to pairing. The
    /// cookie is sent again with each page, so the browser keeps it for 30
    /// days from the last use, as the server keeps the session.
    func signedIn(_ request: Request, _ body: (Visit) async throws -> Response) async throws -> Response {
        guard let token = session(request) else { return Self.redirect("/pair") }
        let visit = Visit(request: request, session: token)
        var response: Response
        do {
            response = try await body(visit)
        } catch let failure as WebRequestFailed {
            // The daemon refused (a part not wired, a store error): said on the page, not a bare 500.
            response = html(Pages.message("The speaker could not answer: \(failure)", visit: visit), status: .serviceUnavailable)
        }
        if response.headers[.setCookie] == nil { response.headers[.setCookie] = RequestRules.sessionCookie(token) }
        return response
    }

    /// A state-changing request: the page's own origin, a session, its
    /// anti-forgery token, and a bounded form body.
    func changing(_ request: Request, _ body: (Visit, [String: String]) async throws -> Response) async throws -> Response {
        guard RequestRules.originAllowed(origin: request.headers[.origin], host: request.head.authority) else {
            logger.notice("web: refused a change from another origin", metadata: ["origin": "\(request.headers[.origin] ?? "none")"])
            return Self.plain(.forbidden, "Refused: this change did not come from the speaker's own page.")
        }
        guard let token = session(request) else {
            return Self.plain(.forbidden, "Refused: this browser is not paired with the speaker (open /pair).")
        }
        let fields: [String: String]
        switch await Self.form(request) {
        case .success(let f): fields = f
        case .failure(let response): return response
        }
        guard RequestRules.formTokenValid(fields["form_token"], session: token) else {
            logger.notice("web: refused a change without the page's form token")
            return Self.plain(.forbidden, "Refused: the form's anti-forgery token is missing or wrong; reload the page.")
        }
        return try await body(Visit(request: request, session: token), fields)
    }

    enum FormRead { case success([String: String]), failure(Response) }

    static func form(_ request: Request) async -> FormRead {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: RequestRules.maximumBodyBytes)
        } catch {
            return .failure(plain(.contentTooLarge, "Refused: a form may send at most \(RequestRules.maximumBodyBytes / 1024) KiB."))
        }
        guard let fields = RequestRules.formFields(String(buffer: buffer)) else {
            return .failure(plain(.badRequest, "Refused: the form's body is not URL-encoded form data."))
        }
        return .success(fields)
    }

    // MARK: Pairing

    func requestCode(_ request: Request, from address: String) async throws -> Response {
        guard RequestRules.originAllowed(origin: request.headers[.origin], host: request.head.authority) else {
            return Self.plain(.forbidden, "Refused: this request did not come from the speaker's own page.")
        }
        if pairingMode == .button {
            let now = now()
            if let wait = pairing.withLock({ $0.lockedOut(address, at: now) }) {
                return html(Pages.pair(message: "Too many wrong codes from \(address): pairing is locked for this address for \(Int(wait.rounded(.up))) s.", paired: false), status: .tooManyRequests)
            }
            armedUntil.withLock { $0 = now.addingTimeInterval(Self.armedFor) }
            logger.notice("web: pairing armed for a press of the button", metadata: ["asked-by": "\(address)"])
            return html(Pages.pair(message: "Press the button on the speaker within a minute: it will say a six-digit code. Type it below.", paired: false))
        }
        let outcome = pairing.withLock { $0.requestCode(from: address, at: now()) }
        switch outcome {
        case .speak(let code):
            let spaced = code.map(String.init).joined(separator: " ")
            do {
                try await announce("Your pairing code is \(spaced). Again: \(spaced).")
            } catch {
                return html(Pages.pair(message: "The speaker could not say a code: \(error)", paired: false), status: .serviceUnavailable)
            }
            logger.notice("web: pairing code spoken", metadata: ["asked-by": "\(address)"])
            return html(Pages.pair(message: "Listen: the speaker is saying a six-digit code. Type it below.", paired: false))
        case .tooSoon(let wait):
            return html(Pages.pair(message: "A code was spoken less than a minute ago (the speaker says one a minute at most): type that one, or ask again in \(Int(wait.rounded(.up))) s.", paired: false), status: .tooManyRequests)
        case .lockedOut(let wait):
            return html(Pages.pair(message: "Too many wrong codes from \(address): pairing is locked for this address for \(Int(wait.rounded(.up))) s.", paired: false), status: .tooManyRequests)
        }
    }

    /// A short press of the device's button (``PairingMode/button``): while
    /// a request from the page waits (a minute), the press is taken and the
    /// code is said; otherwise the press is the engine's. True when taken.
    public func buttonPressed() async -> Bool {
        guard pairingMode == .button else { return false }
        let now = now()
        let armed = armedUntil.withLock { until -> Bool in
            defer { until = .distantPast }
            return now < until
        }
        guard armed, case .speak(let code) = pairing.withLock({ $0.requestCode(from: "the speaker's button", at: now, pressed: true) })
        else { return false }
        let spaced = code.map(String.init).joined(separator: " ")
        logger.notice("web: pairing code spoken after a press of the button")
        // Said off the board's event loop: the next press is read meanwhile.
        let announce = self.announce
        let logger = self.logger
        Task {
            do { try await announce("Your pairing code is \(spaced). Again: \(spaced).") } catch {
                logger.warning("web: the pairing code could not be said: \(error)")
            }
        }
        return true
    }

    func pair(_ request: Request, from address: String) async throws -> Response {
        guard RequestRules.originAllowed(origin: request.headers[.origin], host: request.head.authority) else {
            return Self.plain(.forbidden, "Refused: this request did not come from the speaker's own page.")
        }
        let fields: [String: String]
        switch await Self.form(request) {
        case .success(let f): fields = f
        case .failure(let response): return response
        }
        let outcome = pairing.withLock { $0.attempt(fields["code"] ?? "", from: address, at: now()) }
        switch outcome {
        case .accepted:
            let token = try sessions.create(browser: request.headers[.userAgent] ?? "unknown browser", at: now())
            logger.notice("web: browser paired", metadata: ["id": "\(SessionStore.id(ofToken: token))", "address": "\(address)"])
            var response = Self.redirect("/")
            response.headers[.setCookie] = RequestRules.sessionCookie(token)
            return response
        case .wrong(let left):
            logger.notice("web: wrong pairing code", metadata: ["address": "\(address)", "tries-left": "\(left)"])
            return html(Pages.pair(message: "That is not the code (or it has expired). \(left) tries left before pairing locks for \(address).", paired: false), status: .forbidden)
        case .lockedOut(let wait):
            logger.warning("web: pairing locked for an address after wrong codes", metadata: ["address": "\(address)", "seconds": "\(Int(wait))"])
            return html(Pages.pair(message: "Too many wrong codes from \(address): pairing is locked for this address for \(Int(wait.rounded(.up))) s.", paired: false), status: .tooManyRequests)
        }
    }

    // MARK: Responses

    func html(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type, .cacheControl: "max-age=3600"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Asks the daemon as `parley` would; a refusal becomes the page's message.
    func ask(_ request: ControlRequest) async throws -> ControlResponse {
        let response = await handler.handle(request)
        guard response.ok else { throw WebRequestFailed(response.error ?? "refused") }
        return response
    }
}

struct WebRequestFailed: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
