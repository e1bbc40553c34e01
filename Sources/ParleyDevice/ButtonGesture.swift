/// A button gesture from the hardware (or the console's `:press`).
public enum ButtonGesture: String, Sendable, Hashable, CaseIterable {
    case press
    case longPress = "long-press"
    case doublePress = "double-press"
    /// A press of a volume button (board file `volume-buttons:`); the one
    /// confirm button never makes these.
    case volumeUp = "volume-up"
    case volumeDown = "volume-down"

    /// The gestures of the confirm button, which shortcuts can be triggered by.
    public static let confirmButton: [ButtonGesture] = [.press, .longPress, .doublePress]
}
