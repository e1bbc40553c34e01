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

    @Test func fiveWrongCodesLockAnAddressOutWithAGrowingBackOff() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 1_000_000)
        let a = "192.168.1.50"
        #expect(gate.requestCode(from: a, at: start, random: { 123_456 }) == .speak("123456"))
        for left in stride(from: 4, through: 1, by: -1) {
            #expect(gate.attempt("000000", from: a, at: start) == .wrong(triesLeft: left))
        }
        #expect(gate.attempt("000000", from: a, at: start) == .lockedOut(retryAfter: 30))
        // Locked: even the right code is refused, and no new code is spoken for it.
        #expect(gate.attempt("123456", from: a, at: start.addingTimeInterval(10)) == .lockedOut(retryAfter: 20))
        #expect(gate.requestCode(from: a, at: start.addingTimeInterval(100), random: { 1 }) == .speak("000001"))
        var now = start.addingTimeInterval(100)
        #expect(gate.attempt("1", from: a, at: now) == .wrong(triesLeft: 4))
        for _ in 0..<3 { _ = gate.attempt("1", from: a, at: now) }
        #expect(gate.attempt("1", from: a, at: now) == .lockedOut(retryAfter: 60))
        #expect(gate.requestCode(from: a, at: now.addingTimeInterval(59), random: { 1 }) == .lockedOut(retryAfter: 1))
        // The back-off doubles and stops at an hour.
        var lengths: [TimeInterval] = []
        while lengths.count < 10 {
            now = now.addingTimeInterval(4_000)
            for _ in 0..<4 { _ = gate.attempt("9", from: a, at: now) }
            if case .lockedOut(let length) = gate.attempt("9", from: a, at: now) { lengths.append(length) }
        }
        #expect(lengths.prefix(3) == [120, 240, 480])
        #expect(lengths.last == PairingGate.longestLockOut)
    }

    /// One address guessing locks only itself: the owner's phone still
    /// pairs with the code spoken in the room (a global lock-out let anyone
    /// on the LAN keep pairing locked).
    @Test func aLockedOutAddressLocksNobodyElse() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 2_000_000)
        #expect(gate.requestCode(from: "10.0.0.9", at: start, random: { 246_810 }) == .speak("246810"))
        for _ in 0..<PairingGate.attemptsBeforeLockOut { _ = gate.attempt("111111", from: "10.0.0.66", at: start) }
        #expect(gate.attempt("246810", from: "10.0.0.66", at: start) == .lockedOut(retryAfter: 30))
        #expect(gate.attempt("246810", from: "10.0.0.9", at: start.addingTimeInterval(1)) == .accepted)
    }

    /// Many addresses together get at most `wrongGuessesPerCode` guesses at
    /// one code: then it is thrown away, and the right code is refused.
    @Test func guessesFromManyAddressesAreBoundedPerCode() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 3_000_000)
        #expect(gate.requestCode(from: "10.0.0.9", at: start, random: { 555_555 }) == .speak("555555"))
        var wrong = 0
        for n in 0..<PairingGate.wrongGuessesPerCode {
            if case .wrong = gate.attempt(String(format: "%06d", n), from: "10.0.1.\(n / 4)", at: start) { wrong += 1 }
        }
        #expect(wrong == PairingGate.wrongGuessesPerCode)
        #expect(gate.attempt("555555", from: "10.0.0.9", at: start) == .wrong(triesLeft: 4))
        // A new code a minute later works again.
        #expect(gate.requestCode(from: "10.0.0.9", at: start.addingTimeInterval(60), random: { 7 }) == .speak("000007"))
        #expect(gate.attempt("000007", from: "10.0.0.9", at: start.addingTimeInterval(61)) == .accepted)
    }

    /// Guessers are remembered within a bound: 10,000 addresses leave at
    /// most `maximumAddresses`, and the ones locked stay locked before quiet ones are dropped.
    @Test func rememberedAddressesAreBounded() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 4_000_000)
        for _ in 0..<PairingGate.attemptsBeforeLockOut { _ = gate.attempt("1", from: "10.9.9.9", at: start) }
        for n in 0..<10_000 { _ = gate.attempt("1", from: "10.\(n / 65_536).\(n / 256 % 256).\(n % 256)", at: start.addingTimeInterval(1)) }
        #expect(gate.guessers.count == PairingGate.maximumAddresses)
        if case .lockedOut = gate.attempt("1", from: "10.9.9.9", at: start.addingTimeInterval(2)) {} else {
            Issue.record("the locked address was forgotten before unlocked ones")
        }
    }

    @Test func aCodeIsGoodOnceExpiresAndIsSpokenOnceAMinute() {
        var gate = PairingGate()
        let start = Date(timeIntervalSince1970: 5_000)
        let a = "192.168.1.7"
        #expect(gate.requestCode(from: a, at: start, random: { 42 }) == .speak("000042"))
        // Whoever asks: a second address (a script) gets no new code within the minute.
        #expect(gate.requestCode(from: "192.168.1.99", at: start.addingTimeInterval(5), random: { 7 }) == .tooSoon(retryAfter: 55))
        #expect(gate.attempt(" 000 042 ", from: a, at: start.addingTimeInterval(50)) == .accepted)
        #expect(gate.attempt("000042", from: a, at: start.addingTimeInterval(51)) == .wrong(triesLeft: 4))
        #expect(gate.requestCode(from: a, at: start.addingTimeInterval(100), random: { 99 }) == .speak("000099"))
        #expect(gate.attempt("000099", from: a, at: start.addingTimeInterval(100 + PairingGate.codeLifetime + 1)) == .wrong(triesLeft: 3))
        // A press of the device's button (someone in the room) is not held back by the minute.
        #expect(gate.requestCode(from: a, at: start.addingTimeInterval(101), random: { 98 }) == .tooSoon(retryAfter: 59))
        #expect(gate.requestCode(from: a, at: start.addingTimeInterval(101), pressed: true, random: { 98 }) == .speak("000098"))
        // A clock set back does not hold codes back for as long as it went.
        #expect(gate.requestCode(from: a, at: start.addingTimeInterval(-86_400), random: { 5 }) == .speak("000005"))
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
        // The browser keeps it as long as the server keeps an unused session.
        #expect(cookie.hasSuffix("Max-Age=2592000"))
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
        let id = try #require(reopened.list(at: now).first?.id)
        #expect(try reopened.revoke(id: id))
        #expect(!reopened.validate(token, at: now))
        #expect(try !reopened.revoke(id: id))
    }

    /// A session unused for 30 days ends on the server: refused, unlisted and
    /// gone from the file; one used within the 30 days lives on from its last use.
    @Test func sessionsUnusedForThirtyDaysExpire() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-web-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SessionStore(directory: directory)
        let start = Date(timeIntervalSince1970: 10_000_000)
        let idle = try store.create(browser: "old phone", at: start)
        let used = try store.create(browser: "new phone", at: start)
        let day: TimeInterval = 86_400
        #expect(store.validate(used, at: start.addingTimeInterval(20 * day)))
        #expect(store.list(at: start.addingTimeInterval(31 * day)).map(\.browser) == ["new phone"])
        #expect(!store.validate(idle, at: start.addingTimeInterval(31 * day)))
        #expect(store.validate(used, at: start.addingTimeInterval(49 * day)))
        #expect(!SessionStore(directory: directory).validate(idle, at: start), "an expired session was left in the file")
        #expect(!store.validate(used, at: start.addingTimeInterval(80 * day)))
        #expect(store.list(at: start.addingTimeInterval(80 * day)).isEmpty)
    }
}
