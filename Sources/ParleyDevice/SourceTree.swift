import Foundation

/// The source tree a development build runs from: its executables live in
/// `<root>/.build/<triple>/<configuration>/`, and files the package installs
/// under /usr/share/parley (board files, the adapted acoustic model) are found
/// there instead on a development machine.
public enum SourceTree {
    /// The nearest folder above the running executable (at most four levels:
    /// the configuration, triple and .build folders, then the root) that holds
    /// `relativePath`; nil for an installed binary.
    public static func root(holding relativePath: String, executable: String = CommandLine.arguments[0]) -> URL? {
        var folder = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            folder = folder.deletingLastPathComponent()
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(relativePath).path) { return folder }
        }
        return nil
    }
}
