import Foundation
import ParleyIntents

/// A place in a manifest file (1-based, as editors count).
public struct SourceMark: Sendable, Hashable {
    public var line: Int
    public var column: Int
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// One problem of a manifest: `FILE:LINE:COLUMN: reason`.
public struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var mark: SourceMark
    public var reason: String
    public init(file: String, mark: SourceMark, reason: String) {
        self.file = file
        self.mark = mark
        self.reason = reason
    }
    public var description: String { "\(file):\(mark.line):\(mark.column): \(reason)" }
}

/// Every problem found in one app folder, in file order.
public struct ManifestErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ManifestError]
    public init(_ errors: [ManifestError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// The types a manifest parameter may have (docs/external-apps.md).
public enum ManifestParameterType: String, Sendable, CaseIterable {
    case `enum`, entity, text, integer, decimal, boolean, duration, date, time

    public var kind: ParameterKind {
        switch self {
        case .enum: .enumeration
        case .entity: .entity
        case .text: .text
        case .integer: .integer
        case .decimal: .decimal
        case .boolean: .boolean
        case .duration: .duration
        case .date: .date
        case .time: .time
        }
    }

    /// The values known without the handler.
    var builtInOptions: [ParameterOption]? {
        switch self {
        case .boolean: Bool.staticOptions
        case .duration: SpokenDuration.allOptions
        default: nil
        }
    }

    /// Types whose values can be compared with `min` and `max`.
    var isNumeric: Bool { self == .integer || self == .decimal || self == .duration }
}

/// `manifest.yaml` of an app folder, read and checked (see `ManifestLoader`).
public struct AppManifest: Sendable {
    public struct Parameter: Sendable {
        public var name: String
        public var title: String
        public var type: ManifestParameterType
        public var prompt: String
        public var isOptional: Bool
        public var defaultValue: String?
        public var bounds: ParameterBounds?
        public var values: [ParameterOption]?
        public var parent: ParentCondition?
        public var mark: SourceMark
    }

    public struct Intent: Sendable {
        public var identifier: String
        public var title: String
        public var description: String?
        public var category: IntentCategory
        public var summary: String
        public var confirm: Bool?
        public var timeLimit: Double
        public var parameters: [Parameter]
        public var mark: SourceMark
    }

    public struct Phrase: Sendable {
        public var text: String
        public var mark: SourceMark
    }

    public struct Shortcut: Sendable {
        public var intent: String
        public var title: String?
        public var phrases: [Phrase]
        public var mark: SourceMark
        public var intentMark: SourceMark
    }

    public var identifier: String
    public var name: String
    public var synonyms: [String]
    /// argv, run in `folder`.
    public var handler: [String]
    public var intents: [Intent]
    public var shortcuts: [Shortcut]
    /// The app folder and the manifest file in it.
    public var folder: URL
    public var file: String
    /// Where the top-level keys are, for registration errors.
    public var marks: [String: SourceMark]

    public static let fileName = "manifest.yaml"
}
