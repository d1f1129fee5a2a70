import Foundation

/// The repository the tests were built from, found from this file's place in it: where tests read
/// the documents they hold to the code, the scripts they run and their fixtures' files.
public enum Repository {
    /// The repository's folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// - Parameter path: a path from the repository's folder (`Tests/Fixtures/…`, `README.md`).
    /// - Returns: its URL.
    public static func file(_ path: String) -> URL { root.appendingPathComponent(path) }
}
