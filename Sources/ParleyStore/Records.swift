import Foundation
import GRDB
import ParleyCore

/// The rows of the three tables as GRDB records. Columns are declared, not
/// read by position, and a NULL in a NOT NULL column is a decoding error
/// rather than an empty string.
///
/// Dates are REAL seconds since 1970 and parameters a JSON object with sorted
/// keys (the format the store has always written), not GRDB's defaults.
protocol ParleyRecord: Codable, FetchableRecord, PersistableRecord {}

extension ParleyRecord {
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSince1970
    }

    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSince1970
    }

    static func databaseJSONEncoder(for column: String) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

struct DonationRecord: ParleyRecord {
    static let databaseTableName = "donation"

    var id: Int64?
    var identifier: String?
    var groupIdentifier: String?
    var app: String
    var intent: String
    var parameters: [String: String]
    var date: Date
    var trigger: String
    /// `date` is believed when deleting by age: the clock was synchronised
    /// when this was recorded (`ClockTrust`) and had not gone back
    /// (`StateStore.prune`).
    var dateTrusted = true

    enum CodingKeys: String, CodingKey {
        case id, identifier, groupIdentifier = "group_identifier", app, intent, parameters, date, trigger
        case dateTrusted = "date_trusted"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let identifier = Column(CodingKeys.identifier)
        static let groupIdentifier = Column(CodingKeys.groupIdentifier)
        static let app = Column(CodingKeys.app)
        static let intent = Column(CodingKeys.intent)
        static let date = Column(CodingKeys.date)
        static let dateTrusted = Column(CodingKeys.dateTrusted)
    }

    init(_ donation: Donation) {
        id = donation.rowID
        identifier = donation.identifier
        groupIdentifier = donation.groupIdentifier
        app = donation.app
        intent = donation.intent
        parameters = donation.parameters
        date = donation.date
        trigger = donation.trigger
    }

    var donation: Donation {
        Donation(
            rowID: id, identifier: identifier, groupIdentifier: groupIdentifier, app: app, intent: intent,
            parameters: parameters, date: date, trigger: trigger)
    }
}

struct CustomPhraseRecord: ParleyRecord {
    static let databaseTableName = "custom_phrase"

    /// The normalised phrase (``StateStore/phraseKey(_:)``).
    var key: String
    var phrase: String
    var app: String
    var intent: String
    var parameters: [String: String]
    var created: Date

    init(_ phrase: CustomPhrase) {
        key = StateStore.phraseKey(phrase.phrase)
        self.phrase = phrase.phrase
        app = phrase.app
        intent = phrase.intent
        parameters = phrase.parameters
        created = phrase.created
    }

    var customPhrase: CustomPhrase {
        CustomPhrase(phrase: phrase, app: app, intent: intent, parameters: parameters, created: created)
    }
}

struct AppDataRecord: ParleyRecord {
    static let databaseTableName = "app_data"

    var app: String
    var key: String
    var value: Data

    enum Columns {
        static let app = Column(CodingKeys.app)
        static let key = Column(CodingKeys.key)
        static let value = Column(CodingKeys.value)
    }
}
