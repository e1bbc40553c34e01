import Foundation
import ParleyCore
import Synchronization

/// Which acoustic model the recogniser loads: the one adapted to Parley's
/// commands and to kitchen-like noise (built by scripts/shipped-model.sh,
/// installed with the package), Debian's stock en-us model (the daemon's and
/// `parley understand`'s default), or a folder.
public enum AcousticModel: Sendable, Hashable {
    case adapted
    case stock
    case folder(String)

    /// Debian's pocketsphinx-en-us model, what the adapted one starts from.
    public static let stockFolder = "/usr/share/pocketsphinx/model/en-us/en-us"
    /// Where the package installs the adapted model.
    public static let installedAdaptedFolder = "/usr/share/parley/model/en-us-adapted"
    /// Where `scripts/shipped-model.sh` puts it in a development checkout
    /// (relative to the package root; scripts/run.sh builds it there), found
    /// when the installed model is not.
    public static let developmentAdaptedFolder = ".build/model/en-us-adapted"

    /// "adapted", "stock" or a model folder (holding feat.params).
    public init(parsing value: String) throws {
        switch value {
        case "adapted": self = .adapted
        case "stock": self = .stock
        default:
            guard FileManager.default.fileExists(atPath: (value as NSString).appendingPathComponent("mdef")) else {
                throw SpeechError.badSetting(name: "acoustic model", value: value,
                                             expected: "adapted, stock or a PocketSphinx model folder holding mdef")
            }
            self = .folder(value)
        }
    }

    /// The folder given to PocketSphinx as -hmm. `adapted` is the adapted
    /// model where ``adaptedFolder`` finds one, else the stock model (the
    /// daemon logs a warning then).
    public var folder: String {
        switch self {
        case .stock: return Self.stockFolder
        case .folder(let path): return path
        case .adapted: return Self.adaptedFolder ?? Self.stockFolder
        }
    }

    /// The adapted model's folder: the installed one, else a development
    /// checkout's (see ``adaptedFolder(installed:executable:currentDirectory:)``).
    public static var adaptedFolder: String? {
        adaptedFolder(installed: installedAdaptedFolder, executable: CommandLine.arguments[0],
                      currentDirectory: FileManager.default.currentDirectoryPath)
    }

    /// The first of: `installed`; ``developmentAdaptedFolder`` in the source
    /// tree `executable` was built in; the same relative to `currentDirectory`
    /// (a binary run from elsewhere in a checkout). A folder counts when it
    /// holds the model's sendump (the last file adapt-model.sh writes).
    static func adaptedFolder(installed: String, executable: String, currentDirectory: String) -> String? {
        let model = "sendump"
        if FileManager.default.fileExists(atPath: installed + "/" + model) { return installed }
        let relative = developmentAdaptedFolder + "/" + model
        if let root = SourceTree.root(holding: relative, executable: executable) {
            return root.appendingPathComponent(developmentAdaptedFolder).path
        }
        let here = URL(fileURLWithPath: currentDirectory).appendingPathComponent(developmentAdaptedFolder)
        return FileManager.default.fileExists(atPath: here.appendingPathComponent(model).path) ? here.path : nil
    }

    public static var adaptedIsAvailable: Bool { adaptedFolder != nil }
}

extension AcousticModel {
    private static let configured = Mutex<(commands: AcousticModel, wake: AcousticModel)>((.stock, .stock))

    /// The model every `DecoderSettings()` starts with: the command and
    /// dictation decoders'. Stock until set, so benchmarks and tests measure
    /// the model they name; the daemon sets it once from
    /// `speech.acoustic_model` (stock by default) before it creates any
    /// decoder, so the choice reaches decoders built deep inside the listening
    /// pipeline without threading settings through it; tools override per
    /// decoder with `--acoustic-model` or `--set hmm=...` instead.
    public static var configuredDefault: AcousticModel {
        get { configured.withLock { $0.commands } }
        set { configured.withLock { $0.commands = newValue } }
    }

    /// The model of the wake word detector's decoder
    /// (`DecoderSettings.wake()`), set by the daemon from
    /// `speech.wake_acoustic_model` (stock by default: the detector's
    /// thresholds were tuned on the stock model, and the adapted one shifts
    /// its scores; BENCHMARKS.md, "The wake word with the adapted model").
    public static var configuredWakeDefault: AcousticModel {
        get { configured.withLock { $0.wake } }
        set { configured.withLock { $0.wake = newValue } }
    }
}
