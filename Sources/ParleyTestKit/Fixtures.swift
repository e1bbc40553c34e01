import Foundation

/// The real recordings the tests use: a small subset of the Apache-2.0 sets,
/// copied into `Tests/Fixtures/` of this package (its README.md names the
/// source sets, commits and which test uses which file), so a clone runs its
/// tests with nothing beside it. Evaluation and benchmark scripts use the
/// full sets elsewhere (README, "Test data"); no test reads them.
public enum Fixtures {
    /// The package root, found from this source file's location
    /// (Sources/ParleyTestKit/Fixtures.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Tests/Fixtures` of the package.
    public static var root: URL { packageRoot.appendingPathComponent("Tests/Fixtures") }

    public static var coffeeMaker: URL { root.appendingPathComponent("coffee-maker") }
    /// Twelve of the 111 development recordings (the first eleven by name and one more).
    public static var coffeeClean: URL { coffeeMaker.appendingPathComponent("clean") }
    /// The labels of all 111 development recordings (only twelve of the files are here).
    public static var coffeeLabels: URL { coffeeMaker.appendingPathComponent("labels.json") }
    public static var coffeeGrammar: URL { coffeeMaker.appendingPathComponent("grammar.yaml") }
    /// The first 20 s of the benchmark's kitchen noise.
    public static var kitchenNoise: URL { root.appendingPathComponent("noise/kitchen-20s.wav") }
    /// The first ten recordings of "computer" by name.
    public static var wakeComputer: URL { root.appendingPathComponent("wake-computer/clean") }

    /// One coffee recording by file name, ``Missing`` if it is not there.
    public static func coffeeRecording(_ name: String) throws -> URL {
        try require(coffeeClean.appendingPathComponent(name))
    }

    /// A fixture that is not where it should be: names the path, so a checkout
    /// without it fails each test that needs it with a reason instead of
    /// bringing the whole runner down.
    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String {
            "test fixture missing: \(path) (expected in Tests/Fixtures of the checkout; Tests/Fixtures/README.md lists them)"
        }
    }

    /// `url` if it exists, else ``Missing`` naming it.
    public static func require(_ url: URL) throws -> URL {
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: url.path) }
        return url
    }

    /// The WAV files of a folder, sorted by name; ``Missing`` if the folder
    /// is absent or holds fewer than `atLeast` of them.
    public static func wavFiles(in folder: URL, atLeast: Int = 1) throws -> [URL] {
        let files = try FileManager.default.contentsOfDirectory(at: require(folder), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "wav" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard files.count >= atLeast else {
            throw Missing(path: folder.appendingPathComponent("*.wav (\(files.count) of at least \(atLeast))").path)
        }
        return files
    }
}

extension Fixtures {
    /// RAUC 1.13's JSON as the A/B image prints it (Tests/Fixtures/rauc/README.md).
    public static func raucStatus(_ name: String) throws -> URL {
        try require(root.appendingPathComponent("rauc/\(name).json"))
    }
}
