/// Why a wake model cannot be used. Each names the file and what was
/// expected; the daemon logs it and listens with the next detector.
public enum WakeModelError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String)
    case corrupt(path: String, reason: String)
    case tensorMissing(path: String, name: String)
    case tensorShape(path: String, name: String, expected: String, found: [Int])
    case headInvalid(path: String, reason: String)
    case assetsMissing(searched: [String])

    public var description: String {
        switch self {
        case .unreadable(let path): "\(path): cannot be read"
        case .corrupt(let path, let reason): "\(path): not a TensorFlow Lite model as expected (\(reason))"
        case .tensorMissing(let path, let name): "\(path): no tensor \(name)"
        case .tensorShape(let path, let name, let expected, let found):
            "\(path): tensor \(name) has shape \(found), expected \(expected)"
        case .headInvalid(let path, let reason): "\(path): not a wake head as expected (\(reason))"
        case .assetsMissing(let searched):
            "speech_embedding models (\(SpeechEmbeddingAssets.melName), \(SpeechEmbeddingAssets.embeddingName)) not found in \(searched.joined(separator: ", ")) (scripts/setup.sh installs them)"
        }
    }
}
