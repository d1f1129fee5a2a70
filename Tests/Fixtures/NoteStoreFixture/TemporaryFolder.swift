import Foundation
import TresorCrypto

/// A private folder for one test, removed when the value goes away.
public final class TemporaryFolder {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-apple-notes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Every file of the folder (recursively) with the SHA-256 of its bytes, plus each file's
    /// mode and modification time: what "unchanged" means for a user's folder.
    public func snapshot() throws -> [String: String] {
        var result: [String: String] = [:]
        // The folder's own modification time changes even when a file is created and removed
        // again (a -journal, -wal or -shm that came and went).
        result["."] = "\(try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] ?? "?")"
        let names = try FileManager.default.subpathsOfDirectory(atPath: url.path)
        for name in names {
            let path = url.appendingPathComponent(name).path
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            var entry = "\(attributes[.type] ?? "?") \(attributes[.posixPermissions] ?? "?") \(attributes[.modificationDate] ?? "?")"
            if attributes[.type] as? FileAttributeType == .typeRegular {
                entry += " " + Digest.sha256(try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
            }
            result[name] = entry
        }
        return result
    }
}
