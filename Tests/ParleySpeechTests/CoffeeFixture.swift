import Foundation
import ParleyCore
import ParleyTestKit
@testable import ParleySpeech

/// The coffee-maker fixtures as the speech tests use them. The grammar is
/// loaded once; a missing or bad file is thrown to each test that asks (a
/// `try!` in a static property would end the whole test run instead).
enum CoffeeFixture {
    private static let loaded = Result {
        try RhinoContext.load(Fixtures.require(Fixtures.coffeeGrammar), app: "Coffee Maker")
    }

    /// Tests/Fixtures/coffee-maker/grammar.yaml as a phrase model.
    static func grammar() throws -> PhraseModel { try loaded.get() }

    /// The first `count` labelled recordings by name, each checked to be present.
    static func labelled(_ count: Int) throws -> [LabelledSet.Item] {
        let items = try LabelledSet.load(labels: Fixtures.require(Fixtures.coffeeLabels), folder: Fixtures.coffeeClean).items.prefix(count)
        for item in items { _ = try Fixtures.require(item.file) }
        return Array(items)
    }
}
