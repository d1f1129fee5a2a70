import Foundation
import TresorSystem

/// A fresh home in a temporary folder (`root/home`, with `root` as `HOME`), removed when the
/// test's value goes away.
public final class TemporaryHome: Sendable {
    public let root: URL
    public let paths: TresorPaths

    /// - Parameter prefix: the temporary folder's name before its random part, naming the tests
    ///   that made it.
    public init(prefix: String) {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        paths = TresorPaths(home: root.appendingPathComponent("home").path, environment: ["HOME": root.path])
    }

    deinit { try? FileManager.default.removeItem(at: root) }
}
