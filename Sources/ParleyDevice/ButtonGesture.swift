/// A button gesture from the hardware (or the console's `:press`).
public enum ButtonGesture: String, Sendable, Hashable, CaseIterable {
    case press
    case longPress = "long-press"
    case doublePress = "double-press"
}
