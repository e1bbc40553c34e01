import Foundation

/// The pairing code's rules: the speaker says a six-digit code aloud when the
/// page asks for one, and a browser that types it back gets a session.
/// Guessing is bounded: five wrong codes lock pairing out (and throw the
/// code away, so the next try needs a new code spoken in the room), for 30 s,
/// doubling with each lock-out up to an hour; a code lives five minutes and
/// is good once. A new code may be asked for at most every 15 s, so a page
/// cannot make the speaker talk without pause. Times are passed in, so the
/// rules are tested without waiting.
public struct PairingGate: Sendable {
    public static let codeLifetime: TimeInterval = 300
    public static let attemptsBeforeLockOut = 5
    public static let firstLockOut: TimeInterval = 30
    public static let longestLockOut: TimeInterval = 3_600
    public static let codeInterval: TimeInterval = 15

    public enum CodeRequest: Sendable, Equatable {
        case speak(String)
        case tooSoon(retryAfter: TimeInterval)
        case lockedOut(retryAfter: TimeInterval)
    }

    public enum Attempt: Sendable, Equatable {
        case accepted
        /// Wrong (or expired, or no code asked for): tries left before the lock-out.
        case wrong(triesLeft: Int)
        case lockedOut(retryAfter: TimeInterval)
    }

    private var code: String?
    private var issued = Date.distantPast
    private var wrongTries = 0
    private var lockOuts = 0
    private var lockedUntil = Date.distantPast

    public init() {}

    public mutating func requestCode(at now: Date, random: () -> UInt32 = { UInt32.random(in: 0...999_999) }) -> CodeRequest {
        if now < lockedUntil { return .lockedOut(retryAfter: lockedUntil.timeIntervalSince(now)) }
        let wait = Self.codeInterval - now.timeIntervalSince(issued)
        if wait > 0 { return .tooSoon(retryAfter: wait) }
        let fresh = String(format: "%06u", random() % 1_000_000)
        code = fresh
        issued = now
        return .speak(fresh)
    }

    public mutating func attempt(_ typed: String, at now: Date) -> Attempt {
        if now < lockedUntil { return .lockedOut(retryAfter: lockedUntil.timeIntervalSince(now)) }
        let digits = typed.filter { !$0.isWhitespace }
        if let code, now.timeIntervalSince(issued) <= Self.codeLifetime, Self.constantTimeEqual(digits, code) {
            self.code = nil
            wrongTries = 0
            lockOuts = 0
            return .accepted
        }
        wrongTries += 1
        guard wrongTries >= Self.attemptsBeforeLockOut else {
            return .wrong(triesLeft: Self.attemptsBeforeLockOut - wrongTries)
        }
        let length = min(Self.firstLockOut * pow(2, Double(lockOuts)), Self.longestLockOut)
        lockOuts += 1
        wrongTries = 0
        code = nil
        lockedUntil = now.addingTimeInterval(length)
        return .lockedOut(retryAfter: length)
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
