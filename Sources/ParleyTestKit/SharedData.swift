import Foundation

/// Where the real recordings live: `../shared/data` beside the package root.
/// Tests and scripts refer to them there and never copy them into the project.
public enum SharedData {
    /// The package root, found from this source file's location
    /// (Sources/ParleyTestKit/SharedData.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/data`, overridable with PARLEY_SHARED_DATA.
    public static var root: URL {
        if let override = ProcessInfo.processInfo.environment["PARLEY_SHARED_DATA"] {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    }

    public static var coffeeMaker: URL { root.appendingPathComponent("coffee-maker") }
    public static var coffeeClean: URL { coffeeMaker.appendingPathComponent("clean") }
    public static var coffeeLabels: URL { coffeeMaker.appendingPathComponent("labels.json") }
    public static var coffeeGrammar: URL { coffeeMaker.appendingPathComponent("grammar.yaml") }
    public static var kitchenNoise: URL { root.appendingPathComponent("noise/kitchen.wav") }
    public static var wakeComputer: URL { root.appendingPathComponent("wake-computer/clean") }

    /// Test data that is not where it should be: names the path, so a run
    /// without ../shared/data fails each test that needs it with a reason
    /// instead of bringing the whole runner down.
    public struct Missing: Error, CustomStringConvertible {
        public let path: String
        public var description: String {
            "test data missing: \(path) (the recordings live in ../shared/data beside the checkout, "
                + "or where PARLEY_SHARED_DATA points)"
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
