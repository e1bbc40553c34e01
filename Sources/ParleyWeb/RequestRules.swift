import Foundation
import ParleyConfiguration
import ParleyControl
import ParleyDaemon
import ParleyDevice

/// The checks every request passes, as pure functions of its headers (the
/// router applies them; WebSecurityTests test them one by one).
public enum RequestRules {
    /// The session cookie's name.
    public static let cookieName = "parley_session"
    /// The most a form may send: a shortcut file is a few kilobytes.
    public static let maximumBodyBytes = 64 * 1024

    /// Which Host names the page answers to: an IPv4 literal, localhost, a
    /// `.local` name or this machine's own name. Any other name means the
    /// browser was sent here by a DNS name someone else controls (DNS
    /// rebinding), and nothing is answered.
    public static func hostAllowed(_ host: String?, machineName: String) -> Bool {
        guard let host, !host.isEmpty, host.count <= 255 else { return false }
        var name = host.lowercased()
        if let colon = name.lastIndex(of: ":") {
            guard UInt16(name[name.index(after: colon)...]) != nil else { return false }
            name = String(name[..<colon])
        }
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name == machineName.lowercased() { return true }
        if isIPv4(name) { return true }
        return name.hasSuffix(".local") && name.dropLast(6).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
            && name.count > 6
    }

    /// A state-changing request must come from the page itself: its Origin
    /// header is exactly `http://<Host>`. No Origin is refused (every
    /// browser this page supports sends it on POST).
    public static func originAllowed(origin: String?, host: String?) -> Bool {
        guard let origin, let host, !host.isEmpty else { return false }
        return origin.lowercased() == "http://\(host.lowercased())"
    }

    /// The anti-forgery token of a session: derived from the session token,
    /// which only the browser's cookie holds, so another site can neither
    /// read nor compute it.
    public static func formToken(forSession token: String) -> String {
        String(SHA256.hex("parley-form:" + token).prefix(32))
    }

    public static func formTokenValid(_ sent: String?, session token: String) -> Bool {
        guard let sent else { return false }
        return PairingGate.constantTimeEqual(sent, formToken(forSession: token))
    }

    /// The session token from a Cookie header, if it has one.
    public static func sessionToken(cookieHeader: String?) -> String? {
        guard let cookieHeader else { return nil }
        for part in cookieHeader.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(cookieName + "=") {
                let value = String(pair.dropFirst(cookieName.count + 1))
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// The Set-Cookie value for a session: not readable by scripts, sent
    /// only on requests from the page's own pages, and kept by the browser as
    /// long as the server keeps an unused session (30 days; sent again on
    /// each signed-in page, so it runs from the last use as on the server).
    public static func sessionCookie(_ token: String) -> String {
        "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Int(SessionStore.maximumIdle))"
    }

    public static let clearedCookie = "\(cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"

    /// An application/x-www-form-urlencoded body as fields (the last of a
    /// repeated name wins); nil when it is not valid percent-encoding.
    public static func formFields(_ body: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String? { s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { return nil }
            fields[name] = value
        }
        return fields
    }

    static func isIPv4(_ text: String) -> Bool { ConfigLoader.isIPv4(text) }
}
