import Foundation
import Testing

@testable import ParleySpeech

/// Choosing the acoustic model: `speech.acoustic_model`, `--acoustic-model`
/// and `--set hmm=` / `--set mllr=` all go through these.
@Suite struct AcousticModelTests {
    @Test func stockAndFoldersResolveToTheirFolders() throws {
        #expect(try AcousticModel(parsing: "stock").folder == AcousticModel.stockFolder)
        #expect(try AcousticModel(parsing: AcousticModel.stockFolder) == .folder(AcousticModel.stockFolder))
        // Without the package's model installed, adapted falls back to stock.
        let adapted = try AcousticModel(parsing: "adapted")
        #expect(adapted == .adapted)
        #expect(adapted.folder == (AcousticModel.adaptedIsAvailable ? AcousticModel.installedAdaptedFolder : AcousticModel.stockFolder))
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
