import Foundation

/// The pairing code's rules: the speaker says a six-digit code aloud when the
/// page asks for one, and a browser that types it back gets a session.
///
/// Guessing is bounded per client address: five wrong codes lock that
/// address out for 30 s, doubling with each lock-out up to an hour. Other
/// addresses are not locked (a global lock-out let anyone on the LAN keep
/// pairing locked for everyone), and the spoken code survives another
/// address's lock-out, so the owner in the room can still type it. What
/// bounds guessing across many addresses is the code itself: it takes at
/// most ``wrongGuessesPerCode`` wrong guesses in all before it is thrown
/// away (a one-in-20,000 chance at best for a million codes), and it lives
/// five minutes and is good once. A new code is spoken at most once a
/// minute whoever asks, so a script cannot make the speaker talk more often
/// than that. Times are passed in, so the rules are tested without waiting.
public struct PairingGate: Sendable {
    public static let codeLifetime: TimeInterval = 300
    public static let attemptsBeforeLockOut = 5
    public static let firstLockOut: TimeInterval = 30
    public static let longestLockOut: TimeInterval = 3_600
    /// The speaker says a new code at most this often, whoever asks.
    public static let codeInterval: TimeInterval = 60
    /// Wrong guesses from all addresses together before the code is thrown away.
    public static let wrongGuessesPerCode = 50
    /// Addresses remembered at once; past it the one seen longest ago (and not locked, if any) is forgotten.
    public static let maximumAddresses = 256

    public enum CodeRequest: Sendable, Equatable {
        case speak(String)
        case tooSoon(retryAfter: TimeInterval)
        case lockedOut(retryAfter: TimeInterval)
    }

    public enum Attempt: Sendable, Equatable {
        case accepted
        /// Wrong (or expired, or no code asked for): tries left before this address is locked out.
        case wrong(triesLeft: Int)
        case lockedOut(retryAfter: TimeInterval)
    }

    /// One client address's guesses.
    struct Guesser: Sendable {
        var wrongTries = 0
        var lockOuts = 0
        var lockedUntil = Date.distantPast
        var lastSeen = Date.distantPast
    }

    private var code: String?
    private var issued = Date.distantPast
    private var wrongForCode = 0
    private(set) var guessers: [String: Guesser] = [:]

    public init() {}

    /// `address`: the client's IP address as the socket gives it (never a
    /// header). `pressed`: asked by a press of the device's button (someone
    /// in the room), which the once-a-minute limit does not hold back.
    public mutating func requestCode(from address: String, at now: Date, pressed: Bool = false,
                                     random: () -> UInt32 = { UInt32.random(in: 0...999_999) }) -> CodeRequest {
        if let wait = lockedOut(address, at: now) { return .lockedOut(retryAfter: wait) }
        // A clock set back (a Pi without a clock) must not block codes for as long as it went back.
        let since = now.timeIntervalSince(issued)
        let wait = Self.codeInterval - since
        if !pressed, wait > 0, since >= 0 { return .tooSoon(retryAfter: wait) }
        let fresh = String(format: "%06u", random() % 1_000_000)
        code = fresh
        issued = now
        wrongForCode = 0
        return .speak(fresh)
    }

    /// The seconds `address` is still locked out for, nil when it is not.
    public func lockedOut(_ address: String, at now: Date) -> TimeInterval? {
        guard let until = guessers[address]?.lockedUntil, now < until else { return nil }
        return until.timeIntervalSince(now)
    }

    public mutating func attempt(_ typed: String, from address: String, at now: Date) -> Attempt {
        var guesser = guessers[address] ?? Guesser()
        guesser.lastSeen = now
        defer { remember(guesser, for: address, at: now) }
        if now < guesser.lockedUntil { return .lockedOut(retryAfter: guesser.lockedUntil.timeIntervalSince(now)) }
        let digits = typed.filter { !$0.isWhitespace }
        if let code, now.timeIntervalSince(issued) <= Self.codeLifetime, Self.constantTimeEqual(digits, code) {
            self.code = nil
            guesser = Guesser(lastSeen: now)
            return .accepted
        }
        if code != nil {
            wrongForCode += 1
            if wrongForCode >= Self.wrongGuessesPerCode { code = nil }
        }
        guesser.wrongTries += 1
        guard guesser.wrongTries >= Self.attemptsBeforeLockOut else {
            return .wrong(triesLeft: Self.attemptsBeforeLockOut - guesser.wrongTries)
        }
        let length = min(Self.firstLockOut * pow(2, Double(guesser.lockOuts)), Self.longestLockOut)
        guesser.lockOuts += 1
        guesser.wrongTries = 0
        guesser.lockedUntil = now.addingTimeInterval(length)
        return .lockedOut(retryAfter: length)
    }

    /// Keeps `guesser`, within ``maximumAddresses``: an address whose lock
    /// has ended and that has been quiet for a day is forgotten first, then
    /// the one seen longest ago (an unlocked one before a locked one).
    private mutating func remember(_ guesser: Guesser, for address: String, at now: Date) {
        guessers[address] = guesser
        guard guessers.count > Self.maximumAddresses else { return }
        guessers = guessers.filter { $0.value.lockedUntil > now || now.timeIntervalSince($0.value.lastSeen) < 86_400 || $0.key == address }
        while guessers.count > Self.maximumAddresses {
            let victim = guessers.filter { $0.key != address }.min { a, b in
                let (lockedA, lockedB) = (a.value.lockedUntil > now, b.value.lockedUntil > now)
                return lockedA != lockedB ? !lockedA : a.value.lastSeen < b.value.lastSeen
            }
            guard let victim else { break }
            guessers[victim.key] = nil
        }
    }

    /// Compares without stopping at the first difference, so the time taken
    /// tells nothing about how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in x.indices { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
