/// Rewrites text so numbers, prices, times and durations are read the way
/// people say them ("$4.50" → "four dollars fifty", "10 min" → "ten
/// minutes", "7:30" → "seven thirty"). espeak-ng reads digits itself, but
/// says "$4.50" as "four dollars and fifty cents" at best and "10 min" as
/// "ten min".
public enum SpokenText {
    public static func normalise(_ text: String) -> String {
        var out: [String] = []
        let tokens = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var i = 0
        while i < tokens.count {
            var token = tokens[i]
            var trailing = ""
            while let last = token.last, ",.!?;".contains(last), token.count > 1 {
                trailing = String(last) + trailing
                token.removeLast()
            }
            let next = i + 1 < tokens.count ? tokens[i + 1].lowercased().trimmingCharacters(in: ",.!?;") : nil
            if let price = price(token) {
                out.append(price + trailing)
            } else if let time = clock(token) {
                out.append(time + trailing)
            } else if let n = Int(token), let next, let unit = durationUnits[next] {
                out.append(words(n) + " " + (n == 1 ? unit.0 : unit.1) + (tokens[i + 1].last.map { ",.!?;".contains($0) ? String($0) : "" } ?? ""))
                i += 1
            } else if let n = Int(token) {
                out.append(words(n) + trailing)
            } else {
                out.append(token + trailing)
            }
            i += 1
        }
        return out.joined(separator: " ")
    }

    static let durationUnits: [String: (String, String)] = [
        "s": ("second", "seconds"), "sec": ("second", "seconds"), "secs": ("second", "seconds"),
        "min": ("minute", "minutes"), "mins": ("minute", "minutes"), "h": ("hour", "hours"), "hr": ("hour", "hours"),
        "hrs": ("hour", "hours"), "oz": ("ounce", "ounces"),
    ]

    /// "$4.50" → "four dollars fifty"; "$1" → "one dollar"; "$0.75" → "seventy five cents".
    static func price(_ token: String) -> String? {
        guard token.hasPrefix("$") else { return nil }
        let parts = token.dropFirst().split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let dollars = Int(parts[0].isEmpty ? "0" : parts[0]), parts.count <= 2 else { return nil }
        var cents = 0
        if parts.count == 2 {
            guard parts[1].count == 2, let c = Int(parts[1]) else { return nil }
            cents = c
        }
        if dollars == 0 { return cents == 1 ? "one cent" : words(cents) + " cents" }
        let d = words(dollars) + (dollars == 1 ? " dollar" : " dollars")
        return cents == 0 ? d : d + " " + words(cents)
    }

    /// "7:30" → "seven thirty", "7:05" → "seven oh five", "7:00" → "seven o'clock";
    /// an am/pm suffix is kept as letters.
    static func clock(_ token: String) -> String? {
        var t = token.lowercased()
        var suffix = ""
        for s in ["am", "pm"] where t.hasSuffix(s) { suffix = s == "am" ? " a m" : " p m"; t.removeLast(2) }
        let parts = t.split(separator: ":").map(String.init)
        guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), parts[1].count == 2, (0...23).contains(h), (0...59).contains(m) else {
            return nil
        }
        let minutes = m == 0 ? "o'clock" : m < 10 ? "oh " + words(m) : words(m)
        return words(h) + " " + minutes + suffix
    }

    static let small = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
    static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

    /// Cardinal number in words ("one hundred twenty three").
    public static func words(_ n: Int) -> String {
        if n < 0 { return "minus " + words(-n) }
        if n < 20 { return small[n] }
        if n < 100 { return tens[n / 10] + (n % 10 == 0 ? "" : " " + small[n % 10]) }
        if n < 1000 { return small[n / 100] + " hundred" + (n % 100 == 0 ? "" : " " + words(n % 100)) }
        if n < 1_000_000 { return words(n / 1000) + " thousand" + (n % 1000 == 0 ? "" : " " + words(n % 1000)) }
        return words(n / 1_000_000) + " million" + (n % 1_000_000 == 0 ? "" : " " + words(n % 1_000_000))
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
