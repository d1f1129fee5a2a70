import Foundation
import Hummingbird
import Logging
import NIOCore
import TresorKeybag
import TresorKeychain
import TresorNotes
import TresorNotesDomain
import TresorProtocol
import TresorSystem
import TresorWebServer

/// What every notes route shares: who may call them — the `tresor` CLI, for the local account,
/// and applications with their team's notes group, for their team's account (docs/API.md,
/// "Notes for applications") —, the work runs off the event loop (a passphrase costs a PBKDF2
/// run), a locked note of the current passphrase opens through the keychain when the user
/// allowed it (the local account's), and each outcome is logged — by operation, note id and
/// error code, never a title, body, name, hint or passphrase.
struct NotesRouting: Sendable {
    let notes: NotesProvider
    let slot: KeybagSlot
    let keychainKey: NotesKeychainKey
    let callers: CallerResolver

    /// The store, for the CLI only (the routes that act on the local account or the user's
    /// keybag: lock-now, import, the passphrase reset and keychain unlock).
    func store(_ context: DaemonRequestContext) throws -> NotesStore {
        try callers.requireCLI(try context.requireClient(), toManage: "notes")
        return try notes.store()
    }

    /// The store and the account the caller acts for: the local account for the CLI, its
    /// team's account for an application with the notes group. Before the account is used,
    /// ``prepare(_:for:)`` (off the event loop: it may write).
    /// - Throws: `missingEntitlement` for any other client.
    func scope(_ context: DaemonRequestContext) throws -> (NotesStore, AccountID) {
        (try notes.store(), try callers.notesAccount(for: try context.requireClient()))
    }

    /// Makes an application team's account at its first use (the local account always exists).
    func prepare(_ store: NotesStore, for account: AccountID) throws {
        if account != .local { try store.ensureApplicationsAccount(account) }
    }

    /// What `account` may do with note `id` (docs/API.md, "Notes"): its own notes and those
    /// shared with it. Another account's note is `404 notFound` exactly as a missing one; an
    /// `ownerOnly` operation on a note shared with it is `403 forbidden`.
    /// - Parameters:
    ///   - store: the notes store.
    ///   - id: the note.
    ///   - account: the account the request acts for.
    ///   - ownerOnly: whether only the owner may do what is asked (delete, lock, attachments…).
    ///   - includingDeleted: whether a note in Recently Deleted is answered (to its owner: to
    ///     show, restore or delete it for good); otherwise it is `param` ("restore it first").
    /// - Returns: the account's access.
    /// - Throws: `notFound` or `forbidden` as above.
    @discardableResult
    static func checkAccess(
        _ store: NotesStore, note id: String, for account: AccountID, ownerOnly: Bool = false, includingDeleted: Bool = false
    ) throws -> NoteAccess {
        let access = try store.access(toNote: id, for: account, includingDeleted: includingDeleted)
        if ownerOnly { try access.requireOwner() }
        return access
    }

    /// Runs `body` on a Dispatch thread with the store and the caller's account (the CLI's
    /// only, with `cliOnly`), retrying once through the keychain when a locked note of the
    /// local account needs the current passphrase, and logs the outcome.
    func perform<T: Sendable>(
        _ operation: String, _ context: DaemonRequestContext, id: String? = nil, keychainUnlock: Bool = true, cliOnly: Bool = false,
        _ body: @escaping @Sendable (NotesStore, AccountID) throws -> T
    ) async throws -> T {
        let (store, account) = cliOnly ? (try store(context), AccountID.local) : try scope(context)
        let throughKeychain = keychainUnlock && account == .local
        return try await logged(operation, context, id: id) {
            try await offloaded {
                try prepare(store, for: account)
                return throughKeychain ? try withKeychainUnlock(store) { try body($0, account) } : try body(store, account)
            }
        }
    }

    /// Logs an operation's outcome: info on success, notice with the error code on failure.
    func logged<T>(_ operation: String, _ context: DaemonRequestContext, id: String? = nil, _ body: () async throws -> T) async throws -> T {
        var metadata: Logger.Metadata = ["pid": "\(context.client.map { "\($0.credentials.pid)" } ?? "?")"]
        if let id { metadata["id"] = "\(id.prefix(64))" }
        return try await loggedOutcome(
            "notes: \(operation)", logger: context.logger, metadata: metadata, errorCode: { ErrorMiddleware.apiError(for: $0).code }, body)
    }

    /// `body`, and once more after opening the current passphrase's session with the key kept
    /// in the keychain — if `body` needed that passphrase, the user keeps its key there and
    /// the keybag is unlocked.
    func withKeychainUnlock<T>(_ store: NotesStore, _ body: (NotesStore) throws -> T) throws -> T {
        do {
            return try body(store)
        } catch NotesError.passphraseRequired(let lock) where lock.isCurrent {
            guard openWithKeychain(store) else { throw NotesError.passphraseRequired(lock) }
            return try body(store)
        }
    }

    /// Opens the current passphrase's session with the key kept in the keychain; false when
    /// keychain unlock is off, the keybag is not unlocked, the key needs the passcode (user
    /// presence) or is not the current passphrase's.
    func openWithKeychain(_ store: NotesStore, passcode: Passcode? = nil) -> Bool {
        guard (try? store.passphraseStatus().keychainUnlock) == true,
            (try? slot.keybag().lockState) == .unlocked,
            let key = try? keychainKey.read(account: .local, passcode: passcode)
        else { return false }
        return (try? store.openSession(with: key)) == true
    }

    /// After the current passphrase changed (set, change, reset): the keychain keeps the new key.
    func refreshKeychainKey(_ store: NotesStore, account: AccountID = .local) throws {
        guard account == .local, try store.passphraseStatus().keychainUnlock, let key = try store.currentSessionKey() else { return }
        let userPresence = keychainKey.userPresence(account: .local) ?? false
        try keychainKey.store(key, account: .local, userPresence: userPresence)
    }

    /// The passphrase status of `account`, with the keychain item's user presence.
    func passphraseStatus(_ store: NotesStore, account: AccountID = .local) throws -> NotesPassphraseStatus {
        let status = try store.passphraseStatus(account: account)
        guard status.keychainUnlock else { return NotesPassphraseStatus(status: status) }
        let kept = keychainKey.kept(account: account)
        guard case .key(let userPresence) = kept else {
            return NotesPassphraseStatus(status: status, keychainKeyMissing: kept == .missing ? true : nil)
        }
        return NotesPassphraseStatus(status: status, keychainUserPresence: userPresence)
    }

    /// A request body that may be empty (routes without required fields).
    func decodeOptional<T: Decodable>(_ type: T.Type, _ request: Request, _ context: DaemonRequestContext, default value: T) async throws -> T {
        var request = request
        let bytes = try await request.collectBody(upTo: context.maxUploadSize)
        return bytes.readableBytes == 0 ? value : try await request.decode(as: type, context: context)
    }

    /// A request body larger than the 1 MiB default, collected up to `limit`.
    func collect(_ request: Request, upTo limit: Int, what: String) async throws -> Data {
        do {
            return try await request.collectData(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.requestTooLarge, "\(what) is larger than \(limit) bytes")
        }
    }
}

extension NoteSummary: ResponseEncodable {}
extension NoteSaveOutcome: ResponseEncodable {}
extension OpenedNote: ResponseEncodable {}
extension Folder: ResponseEncodable {}
extension AttachmentInfo: ResponseEncodable {}
extension ImportReport: ResponseEncodable {}
extension NotesResponse: ResponseEncodable {}
extension FoldersResponse: ResponseEncodable {}
extension LockNowResponse: ResponseEncodable {}
extension NotesPassphraseStatus: ResponseEncodable {}
extension PassphraseChangeProgress: ResponseEncodable {}
extension HintResponse: ResponseEncodable {}
