import Foundation
import ParleyIntents

/// A stored note.
public struct Note: Codable, Sendable, Hashable {
    public var id: String
    public var text: String
    public var created: Date
}

/// Notes live in the app data store under "note.<time>", so keys sort by age.
enum NoteBook {
    static let prefix = "note."

    static func all(_ context: IntentContext) async throws -> [Note] {
        var notes: [Note] = []
        for key in try await context.appData.keys(app: context.app, prefix: prefix) {
            if let data = try await context.appData.value(app: context.app, key: key) {
                notes.append(try JSONDecoder().decode(Note.self, from: data))
            }
        }
        return notes.sorted { ($0.created, $0.id) > ($1.created, $1.id) }
    }

    static func add(_ text: String, _ context: IntentContext) async throws -> Note {
        let existing = try await context.appData.keys(app: context.app, prefix: prefix)
        let stamp = String(format: "%015.0f", context.now.timeIntervalSince1970 * 1000)
        var id = prefix + stamp
        var n = 1
        while existing.contains(id) { id = prefix + stamp + "-\(n)"; n += 1 }
        let note = Note(id: id, text: text, created: context.now)
        try await context.appData.setValue(try JSONEncoder().encode(note), app: context.app, key: id)
        return note
    }

    static func matching(_ words: String, _ context: IntentContext) async throws -> [Note] {
        let wanted = Set(PhraseText.normalise(words)).subtracting(["the", "a", "an", "my", "note", "about"])
        return try await all(context).filter { wanted.isSubset(of: Set(PhraseText.normalise($0.text))) }
    }
}

/// A note as an entity: found by recency (suggestions) or by its words.
public struct NoteEntity: AppEntity, Hashable {
    public let id: String
    public let displayName: String
    public static let typeDisplayName = "Note"
    public static let defaultQuery = NoteQuery()
}

public struct NoteQuery: EntityQuery {
    public init() {}
    public func entities(for identifiers: [String], context: IntentContext) async throws -> [NoteEntity] {
        try await NoteBook.all(context).filter { identifiers.contains($0.id) }.map { NoteEntity(id: $0.id, displayName: $0.text) }
    }
    public func suggestedEntities(context: IntentContext) async throws -> [NoteEntity] {
        // Newest first; more than five are asked about openly and found by their words.
        try await NoteBook.all(context).prefix(50).map { NoteEntity(id: $0.id, displayName: $0.text) }
    }
    public func entities(matching text: String, context: IntentContext) async throws -> [NoteEntity] {
        try await NoteBook.matching(text, context).map { NoteEntity(id: $0.id, displayName: $0.text) }
    }
}

/// Creates a note (the create pattern).
public struct CreateNote: AppIntent {
    public static let title = "Add a note"
    public static let category = IntentCategory.create
    public static let parameterSummary = "Add the note {text}"
    public static let outputProperties: [String]? = ["text"]
    @Parameter(title: "Text", prompt: "What should the note say?") public var text: String
    public init() {}
    public func perform(context: IntentContext) async throws -> IntentResult {
        let note = try await NoteBook.add(text, context)
        return IntentResult(dialog: "Noted.", detail: "The note says: \(note.text).", output: ["text": .text(note.text)],
                            donationIdentifier: note.id, donationGroup: "notes")
    }
}

/// Reads the latest notes (the get pattern, by recency).
public struct ReadNotes: AppIntent {
    public static let title = "Read my notes"
    public static let category = IntentCategory.get
    public static let outputProperties: [String]? = ["count", "latest"]
    public init() {}
    public func perform(context: IntentContext) async throws -> IntentResult {
        let notes = try await NoteBook.all(context)
        guard !notes.isEmpty else { return IntentResult(dialog: "There are no notes.") }
        let latest = notes.prefix(3).map(\.text)
        let count = notes.count == 1 ? "one note" : "\(SpokenNumber.words(min(notes.count, 999_999))) notes"
        return IntentResult(dialog: "There \(notes.count == 1 ? "is" : "are") \(count).",
                            detail: "The latest: " + latest.joined(separator: "; ") + ".",
                            output: ["count": .number(Double(notes.count)), "latest": .text(notes[0].text)])
    }
}

/// Finds notes by their words (the get pattern, by words).
public struct FindNotes: AppIntent {
    public static let title = "Find a note"
    public static let category = IntentCategory.get
    public static let outputProperties: [String]? = ["count"]
    @Parameter(title: "Words", prompt: "Which words are in the note?") public var words: String
    public init() {}
    public func perform(context: IntentContext) async throws -> IntentResult {
        let found = try await NoteBook.matching(words, context)
        guard !found.isEmpty else { return IntentResult(dialog: "No note has those words.") }
        return IntentResult(dialog: found.count == 1 ? "One note:" : "\(capitalisedFirst(SpokenNumber.words(min(found.count, 999_999)))) notes:",
                            detail: found.prefix(3).map(\.text).joined(separator: "; ") + ".",
                            output: ["count": .number(Double(found.count))])
    }
}

/// Deletes a note, after confirmation (the delete pattern).
public struct DeleteNote: AppIntent {
    public static let title = "Delete a note"
    public static let category = IntentCategory.delete
    @Parameter(title: "Note", prompt: "Which note?") public var note: NoteEntity
    public init() {}

    public func resolve(parameter: String, proposed: String?, context: IntentContext) async throws -> ParameterResolution? {
        guard parameter == "note", proposed == nil else { return nil }
        let notes = try await NoteQuery().suggestedEntities(context: context)
        if notes.isEmpty { throw IntentError("There are no notes to delete.") }
        return nil
    }

    public func confirmationDialog(context: IntentContext) async throws -> String? {
        "The note \"\(note.displayName)\" will be deleted for good."
    }

    public func perform(context: IntentContext) async throws -> IntentResult {
        try await context.appData.removeValue(app: context.app, key: note.id)
        return IntentResult(dialog: "Deleted.", detail: "The note \"\(note.displayName)\" is gone.")
    }
}

public struct NotesApp: ParleyApp {
    public init() {}
    public let identifier = "Notes"
    public let name = "Notes"
    public let synonyms = ["my notes", "notebook"]
    public var intents: [any AppIntent.Type] { [CreateNote.self, ReadNotes.self, FindNotes.self, DeleteNote.self] }
    public var shortcuts: [AppShortcut] {
        [
            AppShortcut(intent: CreateNote.self, phrases: ["add a note to {app}", "add a note with {app}", "take a note in {app}", "make a note in {app}"],
                        shortTitle: "Add a note"),
            AppShortcut(intent: ReadNotes.self, phrases: ["read {app}", "read my notes with {app}", "what's in {app}"], shortTitle: "Read notes"),
            AppShortcut(intent: FindNotes.self, phrases: ["find a note in {app}", "search {app}"], shortTitle: "Find a note"),
            AppShortcut(intent: DeleteNote.self, phrases: ["delete a note from {app}", "delete a note in {app}"], shortTitle: "Delete a note"),
        ]
    }
}
