/// What kind of action an intent is. The category decides whether the
/// intent must be confirmed before it runs and which verb the confirmation
/// names ("Press the button to order").
public enum IntentCategory: String, Sendable, Hashable, CaseIterable, Codable {
    case order, payment, create, edit, delete, get, play, set, generic

    /// Consequential categories are confirmed before they run (docs/spec.md §4).
    public var requiresConfirmation: Bool {
        switch self {
        case .order, .payment, .delete: true
        default: false
        }
    }

    /// The verb a confirmation names: "Press the button to <verb>".
    public var confirmationVerb: String {
        switch self {
        case .order: "order"
        case .payment: "pay"
        case .create: "create it"
        case .edit: "change it"
        case .delete: "delete it"
        case .get: "continue"
        case .play: "play"
        case .set: "set it"
        case .generic: "continue"
        }
    }
}
