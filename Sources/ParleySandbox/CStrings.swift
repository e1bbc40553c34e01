import Foundation

/// A NULL-terminated array of C strings (argv, envp) for the duration of
/// `body`: what posix_spawn takes. The daemon's direct start, the sandbox
/// runner and the tests' socket activator all start programs this way.
public enum CStrings {
    public static func with<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
        }
    }

    /// "KEY=value" lines of `environment`, sorted by key.
    public static func environment(_ environment: [String: String]) -> [String] {
        environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }
}
