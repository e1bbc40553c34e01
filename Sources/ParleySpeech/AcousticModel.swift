import Foundation
import Synchronization

/// Which acoustic model the recogniser loads: Debian's stock en-us model (the
/// default), the one adapted to Parley's commands and to kitchen-like noise
/// (built by scripts/adapt-model.sh, installed with the package), or a folder.
public enum AcousticModel: Sendable, Hashable {
    case adapted
    case stock
    case folder(String)

    /// Debian's pocketsphinx-en-us model, what the adapted one starts from.
    public static let stockFolder = "/usr/share/pocketsphinx/model/en-us/en-us"
    /// Where the package installs the adapted model.
    public static let installedAdaptedFolder = "/usr/share/parley/model/en-us-adapted"
    /// Where `scripts/adapt-model.sh` puts it in a development checkout
    /// (relative to the package root). Used only when named as a folder
    /// (scripts/run.sh does when it has been built), so tests and tools give
    /// the same results whether or not a checkout has built it.
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

    /// The folder given to PocketSphinx as -hmm. `adapted` is the installed
    /// model, else (a development machine) the stock model: see
    /// ``adaptedIsAvailable``.
    public var folder: String {
        switch self {
        case .stock: return Self.stockFolder
        case .folder(let path): return path
        case .adapted: return Self.adaptedFolder ?? Self.stockFolder
        }
    }

    /// The adapted model's folder when it is installed.
    public static var adaptedFolder: String? {
        let installed = FileManager.default.fileExists(atPath: installedAdaptedFolder + "/sendump")
        return installed ? installedAdaptedFolder : nil
    }

    public static var adaptedIsAvailable: Bool { adaptedFolder != nil }
}

extension AcousticModel {
    private static let configured = Mutex<AcousticModel>(.stock)

    /// The model every `DecoderSettings()` starts with (command, wake and
    /// dictation decoders alike). The daemon sets it once from
    /// `speech.acoustic_model` before it creates any decoder, so the choice
    /// reaches decoders built deep inside the listening pipeline without
    /// threading settings through it; tools override per decoder with
    /// `--set hmm=...` instead.
    public static var configuredDefault: AcousticModel {
        get { configured.withLock { $0 } }
        set { configured.withLock { $0 = newValue } }
    }
}
