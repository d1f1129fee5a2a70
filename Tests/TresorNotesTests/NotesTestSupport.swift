import Foundation
import GRDB
import TresorKeybag
import TresorSystem
import TresorTestSupport

@testable import TresorNotes

// Shared helpers of the notes tests. Every test builds its own `NotesHome`, so tests never
// share a file and may run in parallel.

func passphrase(_ text: String) -> Passphrase { try! Passphrase(text) }

/// A fresh home with an unlocked keybag and a notes store, removed on deinit.
final class NotesHome {
    private let folder = TemporaryHome(prefix: "tresor-notes")
    var root: URL { folder.root }
    var paths: TresorPaths { folder.paths }
    let clock = TestClock()
    private(set) var keybag: Keybag
    private(set) var notes: NotesStore
    let settings: NotesSettings

    var home: URL { paths.home }

    init(passcode: String? = TestKeybag.passcodeText, sessionIdleTimeout: TimeInterval = 180, kdfRounds: Int = 1_000) throws {
        let paths = folder.paths
        keybag = try Keybag.create(paths: paths, passcode: passcode.map { try! Passcode($0) }, settings: TestKeybag.settings())
        let clock = clock
        settings = .insecureForTesting(kdfRounds: kdfRounds, sessionIdleTimeout: sessionIdleTimeout, clock: { clock.now })
        notes = try NotesStore(paths: paths, keybag: keybag, settings: settings)
    }

    /// A daemon restart: keybag reopened (locked since start), store reopened, sessions gone.
    func restart() throws {
        keybag = try Keybag.open(paths: paths, settings: TestKeybag.settings())
        notes = try NotesStore(paths: paths, keybag: keybag, settings: settings)
    }

    func unlock() throws { try keybag.unlock(passcode: try Passcode(TestKeybag.passcodeText)) }

    /// Every regular file under the home, recursively: databases, `-wal`, `-shm`, attachment
    /// files, temporary files.
    func allFiles() -> [URL] {
        var files: [URL] = []
        let enumerator = FileManager.default.enumerator(at: home, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
        }
        return files
    }

    /// The files holding `marker` in UTF-8 or UTF-16 (either byte order).
    func files(containing marker: String) -> [String] {
        files(containing: [Data(marker.utf8), marker.data(using: .utf16LittleEndian)!, marker.data(using: .utf16BigEndian)!])
    }

    /// The files holding `bytes`.
    func files(containing bytes: Data) -> [String] { files(containing: [bytes]) }

    private func files(containing needles: [Data]) -> [String] {
        allFiles().filter { url in
            guard let data = try? Data(contentsOf: url) else { return false }
            return needles.contains { data.range(of: $0) != nil }
        }.map(\.lastPathComponent)
    }

    /// Runs raw SQL on the notes database, the way an attacker with the file would.
    func tamper(_ change: (Database) throws -> Void) throws {
        try notes.pool.writeWithoutTransaction { db in try change(db) }
    }
}

func unique(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(12))" }
