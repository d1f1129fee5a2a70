import Foundation
import Synchronization
import TresorKeybag
import TresorNotes

/// The daemon's notes store, opened on first use once the home has a keybag (before
/// `tresor init` every notes request answers `notInitialized`). Secure sessions live in the
/// store's memory: the keybag lock path and the idle-expiry task end them here.
final class NotesProvider: Sendable {
    private let slot: KeybagSlot
    private let settings: NotesSettings
    private let opened = Mutex<NotesStore?>(nil)
    /// Where the store announces committed changes (the web server's live updates listen).
    let changes = NoteChangeFeed()

    init(slot: KeybagSlot, settings: NotesSettings) {
        self.slot = slot
        self.settings = settings
    }

    /// The store (`notInitialized` before `tresor init`, `keybagDamaged` if the keybag is).
    func store() throws -> NotesStore {
        try opened.withLock { opened in
            if let opened {
                guard opened.needsReopeningToWrite else { return opened }
                // Opened read-only while the file system was: opened anew now it is writable.
                opened.close()
            }
            let store = try NotesStore(paths: slot.paths, keybag: try slot.keybag(), settings: settings, changes: changes)
            opened = store
            return store
        }
    }

    /// Lock Now, as the keybag locks (auto-lock, `tresor lock`): every session ends. Returns
    /// how many were open; a store never opened has none.
    @discardableResult
    func lockNow() -> Int { opened.withLock { $0 }?.lockNow() ?? 0 }

    /// Ends the sessions idle past the timeout, so their keys leave memory on time.
    @discardableResult
    func expireIdleSessions() -> Int { opened.withLock { $0 }?.expireIdleSessions() ?? 0 }

    /// Opens the store at daemon start when the home is initialised, so that opening folds
    /// what a crash left in `-wal` (a locked note's old sealed body, say) into the main file
    /// right away rather than at the first notes request.
    func openIfInitialised() {
        _ = try? store()
    }

    /// Runs until cancelled, expiring idle sessions every second (and retrying a checkpoint a
    /// reader held off), and once a minute deleting for good the notes 30 days in Recently
    /// Deleted.
    func runExpiry(onExpired: @Sendable (Int) -> Void) async {
        var seconds = 0
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let ended = expireIdleSessions()
            if ended > 0 { onExpired(ended) }
            let store = opened.withLock { $0 }
            store?.completePendingCheckpoint()
            if seconds % 60 == 0 { _ = try? store?.deleteExpiredNotes() }
            seconds += 1
        }
    }
}
