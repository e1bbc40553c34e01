/// Numbers as people say them and as the device speaks them. Shared by the
/// apps (prices, ready times), the phrase normaliser ("12" -> "twelve") and
/// the answer grammars ("three", "the second one").
public enum SpokenNumber {
    static let units = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    static let ordinalWords = [
        "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    ]

    /// Words for 0...999_999, space separated and lower case: 25 -> "twenty five".
    public static func words(_ n: Int) -> String {
        precondition(n >= 0 && n < 1_000_000, "SpokenNumber.words supports 0...999999, got \(n)")
        if n < 20 { return units[n] }
        if n < 100 { return n % 10 == 0 ? tens[n / 10] : "\(tens[n / 10]) \(units[n % 10])" }
        if n < 1000 {
            let rest = n % 100
            return rest == 0 ? "\(units[n / 100]) hundred" : "\(units[n / 100]) hundred \(words(rest))"
        }
        let rest = n % 1000
        return rest == 0 ? "\(words(n / 1000)) thousand" : "\(words(n / 1000)) thousand \(words(rest))"
    }

    /// Ordinal words for 1...10 ("first" ... "tenth").
    public static func ordinal(_ n: Int) -> String? {
        (1...10).contains(n) ? ordinalWords[n] : nil
    }

    /// Parses number words ("twenty five", "a hundred and five", "one") or digits.
    /// Returns nil when any word is not part of a number.
    public static func parse(_ text: String) -> Int? {
        let tokens = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "-" }).map(String.init)
        guard !tokens.isEmpty else { return nil }
        if tokens.count == 1, let value = Int(tokens[0]) { return value }
        var total = 0
        var current = 0
        var sawNumber = false
        for (index, token) in tokens.enumerated() {
            if let unit = units.firstIndex(of: token) {
                current += unit; sawNumber = true
            } else if let ten = tens.firstIndex(of: token), ten >= 2 {
                current += ten * 10; sawNumber = true
            } else if token == "hundred" {
                current = max(current, 1) * 100; sawNumber = true
            } else if token == "thousand" {
                total += max(current, 1) * 1000; current = 0; sawNumber = true
            } else if token == "a" && index == 0 {
                continue
            } else if token == "and" && sawNumber {
                continue
            } else {
                return nil
            }
        }
        return sawNumber ? total + current : nil
    }

    /// A price as spoken: 450 cents -> "four dollars fifty", 300 -> "three dollars".
    public static func money(cents: Int) -> String {
        let dollars = cents / 100
        let rest = cents % 100
        let dollarWord = dollars == 1 ? "dollar" : "dollars"
        if rest == 0 { return "\(words(dollars)) \(dollarWord)" }
        if dollars == 0 { return "\(words(rest)) cents" }
        return "\(words(dollars)) \(dollarWord) \(words(rest))"
    }

    /// A count of minutes as spoken: 1 -> "one minute", 11 -> "eleven minutes".
    public static func minutes(_ n: Int) -> String {
        n == 1 ? "one minute" : "\(words(n)) minutes"
    }
}
