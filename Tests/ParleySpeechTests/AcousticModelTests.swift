import Foundation
import ParleyTestKit
import Testing

@testable import ParleySpeech

/// Choosing the acoustic model: `speech.acoustic_model`, `--acoustic-model`
/// and `--set hmm=` / `--set mllr=` all go through these.
@Suite struct AcousticModelTests {
    @Test func stockAndFoldersResolveToTheirFolders() throws {
        #expect(try AcousticModel(parsing: "stock").folder == AcousticModel.stockFolder)
        #expect(try AcousticModel(parsing: AcousticModel.stockFolder) == .folder(AcousticModel.stockFolder))
        // Without an adapted model (installed or built in this checkout),
        // adapted falls back to stock. The expectation comes from the disk,
        // with the paths written out, not from the code under test.
        let adapted = try AcousticModel(parsing: "adapted")
        #expect(adapted == .adapted)
        let installed = "/usr/share/parley/model/en-us-adapted"
        let checkout = Fixtures.packageRoot.appendingPathComponent(".build/model/en-us-adapted").path
        let expected = FileManager.default.fileExists(atPath: installed + "/sendump") ? installed
            : FileManager.default.fileExists(atPath: checkout + "/sendump") ? checkout
            : "/usr/share/pocketsphinx/model/en-us/en-us"
        #expect(adapted.folder == expected)
    }

    /// `adapted` is the installed model, else the one scripts/adapt-model.sh
    /// built in the checkout the executable runs from, else in the current
    /// directory's checkout, else none (the stock model).
    @Test func adaptedIsTheInstalledThenTheCheckoutsModel() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("acoustic-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        func model(_ folder: String) throws -> String {
            let path = root.appendingPathComponent(folder).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data([1]).write(to: URL(fileURLWithPath: path + "/sendump"))
            return path
        }
        let executable = root.appendingPathComponent("checkout/.build/x86_64-unknown-linux-gnu/release/parleyd").path
        let installed = root.appendingPathComponent("usr/share/parley/model/en-us-adapted").path
        let elsewhere = root.appendingPathComponent("elsewhere").path
        func resolved(in directory: String = "/") -> String? {
            AcousticModel.adaptedFolder(installed: installed, executable: executable, currentDirectory: directory)
        }
        #expect(resolved() == nil)
        let otherCheckout = try model("elsewhere/" + AcousticModel.developmentAdaptedFolder)
        #expect(resolved(in: elsewhere) == otherCheckout)
        let development = try model("checkout/" + AcousticModel.developmentAdaptedFolder)
        #expect(resolved(in: elsewhere) == development)
        // A folder without the model's sendump (a build stopped half-way) does not count.
        try FileManager.default.createDirectory(atPath: installed, withIntermediateDirectories: true)
        #expect(resolved() == development)
        #expect(try model("usr/share/parley/model/en-us-adapted") == installed)
        #expect(resolved(in: elsewhere) == installed)
    }

    @Test func aFolderWithoutAModelIsRefusedByName() {
        #expect {
            try AcousticModel(parsing: "/nowhere/en-us-adapted")
        } throws: { error in
            "\(error)".contains("/nowhere/en-us-adapted") && "\(error)".contains("adapted, stock or a PocketSphinx model folder")
        }
    }

    @Test func settingsNameTheModelAndTheTransform() throws {
        var settings = DecoderSettings()
        try settings.apply("hmm=stock")
        try settings.apply("mllr=/var/lib/parley/mllr_matrix")
        let arguments = settings.arguments(dictionaryPath: "/tmp/d.dict")
        let hmm = try #require(arguments.firstIndex(of: "-hmm"))
        #expect(arguments[hmm + 1] == AcousticModel.stockFolder)
        let mllr = try #require(arguments.firstIndex(of: "-mllr"))
        #expect(arguments[mllr + 1] == "/var/lib/parley/mllr_matrix")
        #expect(arguments.filter { $0 == "-hmm" }.count == 1)  // not also passed on as a raw extra option
        #expect(throws: SpeechError.self) { try settings.apply("acoustic_model=/nowhere") }
        #expect(settings.acousticModel == AcousticModel.stockFolder)  // a refused value changes nothing
    }
}
