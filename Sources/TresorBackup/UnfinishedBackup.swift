import Foundation
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The backup being written, named in the home (`backup-being-written`) so that one the daemon
/// never finished — killed, a power cut — leaves no `FILE.partial` behind for good: the next start
/// removes it (docs/FORMAT.md, "Home files"). A finished or failed backup removes its own.
public enum UnfinishedBackup {
    static let markerName = "backup-being-written"

    /// Names `url` as the backup being written.
    /// - Parameters:
    ///   - url: the backup file (its partial file is `url.partial`).
    ///   - home: the home backed up.
    /// - Throws: ``TresorSystem/SecureFileError`` when the name cannot be written.
    public static func begin(_ url: URL, home: URL) throws {
        try SecureFiles.writeAtomically(Data(url.path.utf8), to: home.appendingPathComponent(markerName))
    }

    /// The backup is finished (written, or failed and removed): nothing to remove at the next start.
    /// - Parameter home: the home backed up.
    public static func end(home: URL) {
        unlink(home.appendingPathComponent(markerName).path)
    }

    /// Removes the partial file of a backup the daemon never finished, at its start.
    /// - Parameter home: the home.
    /// - Returns: the backup file whose partial file was removed, if one was.
    @discardableResult
    public static func removeLeftover(home: URL) -> String? {
        let marker = home.appendingPathComponent(markerName)
        guard let named = try? SecureFiles.read(marker, limit: 64 * 1024) else { return nil }
        defer { unlink(marker.path) }
        let partial = String(decoding: named, as: UTF8.self) + ".partial"
        // `unlink` removes a link itself, never what it names; only a file of that name goes.
        var info = stat()
        guard lstat(partial, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, unlink(partial) == 0 else { return nil }
        return partial
    }
}
