import Foundation
import ParleyDevice

/// Finds the board file `board:` names: a path as given, else a folder of
/// that name in the board directories (`$PARLEY_BOARD_DIR`, /etc/parley/board,
/// /usr/share/parley/board, and `board/` of the source tree the running
/// executable was built in).
public enum BoardLocator {
    public static func searchDirectories(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> [String]
    {
        var directories: [String] = []
        if let custom = environment["PARLEY_BOARD_DIR"], !custom.isEmpty { directories.append(custom) }
        directories += ["/etc/parley/board", "/usr/share/parley/board"]
        // .build/<configuration>/parleyd → the package root's board/.
        if let root = SourceTree.root(holding: "board/sim") { directories.append(root.appendingPathComponent("board").path) }
        return directories
    }

    public static func locate(_ board: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> URL
    {
        if board.contains("/") { return URL(fileURLWithPath: board) }
        let directories = searchDirectories(environment: environment)
        for directory in directories {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(board)
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        throw BoardNotFound(name: board, searched: directories)
    }

    public struct BoardNotFound: Error, CustomStringConvertible {
        public var name: String
        public var searched: [String]
        public var description: String {
            "board \"\(name)\" not found in \(searched.joined(separator: ", ")) (set board: to a name there or a path)"
        }
    }
}
