import ParleyIntents

/// "a latte" -> "A latte".
func capitalisedFirst(_ text: String) -> String {
    guard let first = text.first else { return text }
    return first.uppercased() + text.dropFirst()
}
