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

    /// The WAV files of a folder, sorted by name.
    public static func wavFiles(in folder: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "wav" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
