import Foundation
import Logging
import Synchronization
import TresorKeybag
import TresorKeychain
import TresorNotes
import TresorProtocol
import TresorStorage
import TresorSyncClient

/// What the background sync tells `tresor sync status`.
struct BackgroundSyncReport: Sendable, Equatable {
    /// Why the last background sync failed; nil once one succeeds.
    var lastError: String?
    var lastErrorAt: Date?
    /// Whether the server's live-events stream is open.
    var live = false
    /// Whether the daemon syncs by itself at all (`syncInBackground` in config.json).
    var runs = true
}

/// Keeps a joined device in sync by itself (docs/SYNC.md, "Background sync"): a sync — the one
/// `tresor sync now` runs — shortly after a local change of a syncing item or of a note (an
/// outbox gained a row), when the server's live-events stream says the account's records or
/// notes moved, when the keybag unlocks, and every five minutes. While the keybag is locked it
/// pulls and holds what arrives, sealed and unapplied (``HeldPages``), and the unlock's sync
/// applies it.
/// It holds one stream open, reconnecting with backoff when it drops, and does nothing for a
/// device that is not a trusted member of a circle: it stops at `tresor sync leave` and when
/// the device is removed.
final class BackgroundSync: Sendable {
    let account: SyncAccount
    let keychains: KeychainProvider
    /// The home's notes, synced with the keychain in each run (docs/SYNC.md, "Notes").
    let notes: NotesProvider
    let slot: KeybagSlot
    let logger: Logger

    /// How long a burst of local changes is gathered before the sync that sends them.
    static let gathering: Duration = .milliseconds(25)
    /// How often it syncs with nothing heard (a missed event, a server that was down).
    static let fallbackPoll: Duration = .seconds(300)
    /// The longest wait before a dropped stream is opened again.
    static let longestBackoff: Duration = .seconds(60)

    private let syncWakes: AsyncStream<Void>.Continuation
    private let syncWakeStream: AsyncStream<Void>
    private let listenerWakes: AsyncStream<Void>.Continuation
    private let listenerWakeStream: AsyncStream<Void>
    private let state = Mutex<BackgroundSyncReport>(BackgroundSyncReport())
    /// The login keychain observed, with its observation (a keychain opened anew is observed anew).
    private let observed = Mutex<(keychain: KeychainStore, observation: SyncOutboxObservation)?>(nil)
    /// The notes store observed, likewise (a store reopened writable is observed anew): its
    /// outbox, and its change feed for the folders, which the outbox does not hold.
    private let observedNotes = Mutex<ObservedNotes?>(nil)

    private struct ObservedNotes {
        let store: NotesStore
        let outbox: CommittedInsertObservation
        let folders: UUID
        let passphrases: CommittedInsertObservation

        func cancel() {
            outbox.cancel()
            store.changes.stopListening(folders)
            passphrases.cancel()
        }
    }
    /// The open stream's task, cancelled when the device stops being a trusted member.
    private let stream = Mutex<Task<Void, any Error>?>(nil)

    init(account: SyncAccount, keychains: KeychainProvider, notes: NotesProvider, slot: KeybagSlot, logger: Logger) {
        self.account = account
        self.keychains = keychains
        self.notes = notes
        self.slot = slot
        self.logger = logger
        (syncWakeStream, syncWakes) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        (listenerWakeStream, listenerWakes) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// What `tresor sync status` shows of it.
    var report: BackgroundSyncReport { state.withLock { $0 } }

    /// Marks the background sync as off (`syncInBackground: false`): `tresor sync status` says so.
    func turnedOff() { state.withLock { $0.runs = false } }

    /// Something may have changed — a local change, an unlock, a join or a leave, an event:
    /// a sync follows (several pokes close together make one), and the stream is looked at again.
    func poke() {
        syncWakes.yield()
        listenerWakes.yield()
    }

    /// Runs until cancelled (the daemon stops).
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.runSyncs() }
            group.addTask { await self.runStream() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.fallbackPoll)
                    self.syncWakes.yield()
                }
            }
            await group.next()
            group.cancelAll()
        }
        observed.withLock { $0?.observation.cancel() }
        observedNotes.withLock { $0?.cancel() }
    }

    // MARK: Syncing

    private func runSyncs() async {
        observeOutbox()
        syncWakes.yield()  // at start: what changed while the daemon was down
        for await _ in syncWakeStream {
            try? await Task.sleep(for: Self.gathering)
            await syncOnce()
        }
    }

    /// One sync, when the device is a trusted member and the keybag is unlocked.
    func syncOnce() async {
        observeOutbox()
        guard await isTrustedMember() else {
            stopStream()
            return
        }
        observeNotesOutbox()
        guard let keybag = try? slot.keybag() else { return }
        switch keybag.lockState {
        case .unlocked: break
        case .locked:
            await holdWhileLocked()
            return
        case .lockedSinceStart: return  // the device cannot sign in yet: what arrives waits on the server
        }
        do {
            let answer = try await account.syncNow(try keychains.loginKeychain(), notes: try notes.store(), allowDeletions: false)
            state.withLock {
                $0.lastError = nil
                $0.lastErrorAt = nil
            }
            if answer.pushed + answer.applied + answer.conflictsKept + answer.heldDeletions > 0 {
                logger.info(
                    "sync: background sync",
                    metadata: [
                        "pushed": "\(answer.pushed)", "applied": "\(answer.applied)", "conflicts": "\(answer.conflictsKept)",
                        "heldDeletions": "\(answer.heldDeletions)",
                    ])
            }
            for copy in answer.notes?.unlockedCopiesOfLockedNotes ?? [] {
                logger.notice(
                    "sync: an edit made here of a note locked on another device meanwhile is kept unlocked as its conflict copy: lock or delete it",
                    metadata: ["note": "\(copy)"])
            }
            for held in answer.notes?.heldUntilLocked ?? [] {
                logger.info(
                    "sync: an edit made here of a note locked on another device meanwhile stays here until the note is locked here too (tresor note lock)",
                    metadata: ["note": "\(held)"])
            }
            if answer.notes?.passphraseOvertaken == true {
                logger.notice(
                    "sync: the notes passphrase set here was overtaken by one another device set first, which is current now; notes locked with this device's still open with it (`tresor note rewrap` moves them)"
                )
            }
        } catch {
            // The errors of a sync name no secret (SyncAPIErrors); the keybag may have locked meanwhile.
            let why = String(describing: error).prefix(500)
            state.withLock {
                $0.lastError = String(why)
                $0.lastErrorAt = Date()
            }
            logger.warning("sync: background sync failed", metadata: ["error": "\(why)"])
        }
        if await !isTrustedMember() { stopStream() }
    }

    /// Locked (after an unlock since start): pulls what arrived and holds it, sealed and
    /// unapplied, for the unlock's sync, and syncs the notes (``SyncAccount/holdWhileLocked(_:notes:)``).
    private func holdWhileLocked() async {
        do {
            let held = try await account.holdWhileLocked(try keychains.loginKeychain(), notes: try notes.store())
            state.withLock {
                $0.lastError = nil
                $0.lastErrorAt = nil
            }
            logger.debug("sync: held while locked", metadata: ["records": "\(held)"])
        } catch {
            let why = String(describing: error).prefix(500)
            state.withLock {
                $0.lastError = String(why)
                $0.lastErrorAt = Date()
            }
            logger.warning("sync: pulling while locked failed", metadata: ["error": "\(why)"])
        }
    }

    /// Observes the login keychain's outbox once it exists, anew when it was opened anew.
    private func observeOutbox() {
        guard let keychain = try? keychains.loginKeychain() else { return }
        observed.withLock { observed in
            guard observed?.keychain !== keychain else { return }
            observed?.observation.cancel()
            let wakes = syncWakes
            observed = (keychain, keychain.observeSyncOutbox { wakes.yield() })
        }
    }

    /// Observes the notes' outbox likewise, from the first sync of a trusted member on (a home
    /// that never joined keeps its notes store unopened until it is used): a local change of a
    /// note starts a sync; what a pull applies does not. So does a folder made or deleted here,
    /// or the notes passphrase or its hint set here: the store announces every change of the
    /// folders and of the passphrases, and a sync follows when the local ones are no longer
    /// those this device last agreed with the server — after a pull applied the server's, they are.
    private func observeNotesOutbox() {
        guard let store = try? notes.store() else { return }
        observedNotes.withLock { observed in
            guard observed?.store !== store else { return }
            observed?.cancel()
            let wakes = syncWakes
            let folders = store.changes.listen { change in
                guard change.kind == .folders, change.accounts.contains(.local) else { return }
                Task {
                    guard let names = try? store.folderNamesForSync(), names.local != names.agreed else { return }
                    wakes.yield()
                }
            }
            let passphrases = store.observePassphrases {
                Task {
                    guard let passphrase = try? store.passphraseForSync(), let current = passphrase.current, current != passphrase.agreed
                    else { return }
                    wakes.yield()
                }
            }
            observed = ObservedNotes(
                store: store, outbox: store.observeSyncOutbox { wakes.yield() }, folders: folders, passphrases: passphrases)
        }
    }

    private func isTrustedMember() async -> Bool {
        guard let status = try? await account.status() else { return false }
        return status.joined && status.state == .trusted
    }

    // MARK: The live-events stream

    /// Holds the stream open while the device is a trusted member: each event pokes a sync;
    /// a dropped stream is opened again after 1 s, doubling to a minute while it keeps failing.
    private func runStream() async {
        var backoff: Duration = .seconds(1)
        var wakes = listenerWakeStream.makeAsyncIterator()
        while !Task.isCancelled {
            guard await isTrustedMember(), let client = try? await account.liveClient() else {
                setLive(false)
                guard await wakes.next() != nil else { return }  // a join, an unlock…
                continue
            }
            let task = Task {
                try await client.listen { [self] event in
                    switch event {
                    case .opened:
                        setLive(true)
                        syncWakes.yield()  // what came while no stream was open
                    case .records, .notes, .circle, .resync, .deviceRemoved:
                        syncWakes.yield()
                    }
                }
            }
            stream.withLock { $0 = task }
            let opened: Bool
            do {
                try await task.value
                opened = report.live
            } catch {
                opened = report.live
                if !Task.isCancelled, !(error is CancellationError) {
                    logger.info("sync: live stream closed", metadata: ["why": "\(String(describing: error).prefix(300))"])
                }
            }
            stream.withLock { $0 = nil }
            setLive(false)
            if opened { backoff = .seconds(1) }
            // Jitter, so devices a server dropped together do not come back together.
            try? await Task.sleep(for: backoff + .milliseconds(Int.random(in: 0...250)))
            if !opened { backoff = min(backoff * 2, Self.longestBackoff) }
        }
    }

    private func stopStream() {
        stream.withLock { $0?.cancel() }
    }

    private func setLive(_ live: Bool) {
        state.withLock { $0.live = live }
    }
}

extension SyncAccount {
    /// The client for the live-events stream of a trusted member: the one its syncs keep
    /// (``keptClient(_:device:)``), so the stream and the syncs share one session.
    /// - Throws: when the device is not one, or its identity does not open (keybag never unlocked).
    func liveClient() throws -> SyncClient {
        let (file, device, _) = try trusted()
        return try keptClient(file, device: device)
    }
}
