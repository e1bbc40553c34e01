import Foundation
import ParleyDevice
import Testing

@testable import ParleyWeb

/// The page's rules as pure functions: hashing, pairing, hosts, origins,
/// forms, cookies.
@Suite struct WebSecurityTests {
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Two blocks: the padding crosses the 56-byte boundary.
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func fiveWrongCodesLockPairingOutWithAGrowingBackOff() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 1_000_000)
        #expect(gate.requestCode(at: start, random: { 123_456 }) == .speak("123456"))
        for left in stride(from: 4, through: 1, by: -1) {
            #expect(gate.attempt("000000", at: start) == .wrong(triesLeft: left))
        }
        #expect(gate.attempt("000000", at: start) == .lockedOut(retryAfter: 30))
        // Locked: even the right code is refused, and no new code is spoken.
        #expect(gate.attempt("123456", at: start.addingTimeInterval(10)) == .lockedOut(retryAfter: 20))
        #expect(gate.requestCode(at: start.addingTimeInterval(10), random: { 1 }) == .lockedOut(retryAfter: 20))
        // After the lock the old code is gone: guessing needs a new spoken one.
        let later = start.addingTimeInterval(31)
        #expect(gate.attempt("123456", at: later) == .wrong(triesLeft: 4))
        for _ in 0..<3 { _ = gate.attempt("1", at: later) }
        #expect(gate.attempt("1", at: later) == .lockedOut(retryAfter: 60))
        var now = later
        // The back-off doubles and stops at an hour.
        var lengths: [TimeInterval] = []
        while lengths.count < 10 {
            now = now.addingTimeInterval(4_000)
            for _ in 0..<4 { _ = gate.attempt("9", at: now) }
            if case .lockedOut(let length) = gate.attempt("9", at: now) { lengths.append(length) }
        }
        #expect(lengths.prefix(3) == [120, 240, 480])
        #expect(lengths.last == PairingGate.longestLockOut)
    }

    @Test func aCodeIsGoodOnceAndExpires() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 5_000)
        #expect(gate.requestCode(at: start, random: { 42 }) == .speak("000042"))
        #expect(gate.requestCode(at: start.addingTimeInterval(5), random: { 7 }) == .tooSoon(retryAfter: 10))
        #expect(gate.attempt(" 000 042 ", at: start.addingTimeInterval(60)) == .accepted)
        #expect(gate.attempt("000042", at: start.addingTimeInterval(61)) == .wrong(triesLeft: 4))
        #expect(gate.requestCode(at: start.addingTimeInterval(100), random: { 99 }) == .speak("000099"))
        #expect(gate.attempt("000099", at: start.addingTimeInterval(100 + PairingGate.codeLifetime + 1)) == .wrong(triesLeft: 3))
    }

    @Test func onlyTheSpeakersOwnNamesAreAnswered() {
        for host in ["192.168.1.20", "192.168.1.20:8080", "parley.local", "Parley.local:80", "localhost:8080", "speaker", "speaker.local."] {
            #expect(RequestRules.hostAllowed(host, machineName: "speaker"), "\(host)")
        }
        for host in ["evil.example.com", "parley.local.evil.com", "192.168.1.20.nip.io", "", ".local", "a b.local", "speaker:abc", nil] {
            #expect(!RequestRules.hostAllowed(host, machineName: "speaker"), "\(host ?? "nil")")
        }
    }

    @Test func changesMustComeFromThePagesOwnOrigin() {
        #expect(RequestRules.originAllowed(origin: "http://parley.local", host: "parley.local"))
        #expect(RequestRules.originAllowed(origin: "http://192.168.1.20:8080", host: "192.168.1.20:8080"))
        #expect(!RequestRules.originAllowed(origin: "http://evil.example", host: "parley.local"))
        #expect(!RequestRules.originAllowed(origin: "https://parley.local", host: "parley.local"))
        #expect(!RequestRules.originAllowed(origin: "http://parley.local:8080", host: "parley.local"))
        #expect(!RequestRules.originAllowed(origin: nil, host: "parley.local"))
        #expect(!RequestRules.originAllowed(origin: "null", host: "parley.local"))
    }

    @Test func theFormTokenBelongsToOneSession() {
        let a = String(repeating: "a", count: 43), b = String(repeating: "b", count: 43)
        let token = RequestRules.formToken(forSession: a)
        #expect(token.count == 32)
        #expect(RequestRules.formTokenValid(token, session: a))
        #expect(!RequestRules.formTokenValid(token, session: b))
        #expect(!RequestRules.formTokenValid(nil, session: a))
        #expect(!RequestRules.formTokenValid("", session: a))
    }

    @Test func cookiesAndFormsAreReadStrictly() {
        #expect(RequestRules.sessionToken(cookieHeader: "a=1; parley_session=xyz; b=2") == "xyz")
        #expect(RequestRules.sessionToken(cookieHeader: "parley_session=") == nil)
        #expect(RequestRules.sessionToken(cookieHeader: "xparley_session=abc") == nil)
        #expect(RequestRules.formFields("a=1+2&b=%2Fetc%2Fpasswd&c") == ["a": "1 2", "b": "/etc/passwd", "c": ""])
        #expect(RequestRules.formFields("a=%zz") == nil)
        let cookie = RequestRules.sessionCookie("tok")
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
    }

    @Test func sessionsAreStoredHashedAndCanBeRevoked() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-web-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SessionStore(directory: directory)
        let now = Date(timeIntervalSince1970: 2_000_000)
        let token = try store.create(browser: "Test browser", at: now)
        #expect(token.count == 43)
        let file = try String(contentsOf: store.file, encoding: .utf8)
        #expect(!file.contains(token))
        #expect(file.contains(SHA256.hex(token)))
        let mode = try FileManager.default.attributesOfItem(atPath: store.file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(store.validate(token, at: now))
        #expect(!store.validate(String(token.dropLast()) + "x", at: now))
        // A second store reads the same file (a restart keeps pairings).
        let reopened = SessionStore(directory: directory)
        #expect(reopened.validate(token, at: now))
        let id = try #require(reopened.list().first?.id)
        #expect(try reopened.revoke(id: id))
        #expect(!reopened.validate(token, at: now))
        #expect(try !reopened.revoke(id: id))
    }
}
