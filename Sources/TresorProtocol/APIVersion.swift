/// The daemon's local API: HTTP/1.1 + JSON over the Unix socket, every path under
/// `/v<version>/`. Described in `docs/API.md` and `docs/openapi.yaml`.
///
/// A change that removes or renames a field or route makes a new version; adding optional
/// fields does not.
public enum APIVersion {
    /// The API version this library speaks, as `GET /v1/status` reports it (`apiVersion`).
    public static let current = 1
    /// The prefix of every path of ``current``.
    public static let pathPrefix = "/v1"
    /// Requests larger than this are refused with `requestTooLarge` (room for a 256 KiB
    /// secret in Base64 and its attributes).
    public static let maximumRequestBytes = 1024 * 1024
}

/// Tresor's release, which `tresor --version`, `tresord --version` and `GET /v1/status`
/// (`daemonVersion`) report.
public enum TresorVersion {
    /// The release number, as `tresor --version` prints it.
    public static let current = "0.1.0"
}

/// The routes of version 1, so client and server spell them once.
public enum Route {
    /// `GET /v1/status`: the daemon and its keybag (``DaemonStatus``).
    public static let status = "/v1/status"
    /// `POST /v1/init`: creates the home's keybag (``InitRequest``).
    public static let initialize = "/v1/init"
    /// `POST /v1/unlock`: unlocks the login keybag or a created keychain (``UnlockRequest``).
    public static let unlock = "/v1/unlock"
    /// `POST /v1/lock`: locks every keychain now, or one (``LockRequest``, optional body).
    public static let lock = "/v1/lock"
    /// `POST /v1/passcode/change`: sets a first passcode or changes it (``ChangePasscodeRequest``).
    public static let changePasscode = "/v1/passcode/change"
    /// `POST /v1/passcode/remove`: removes the login keybag's passcode (``RemovePasscodeRequest``).
    public static let removePasscode = "/v1/passcode/remove"
    /// Unlock at login (docs/API.md, "Login link"): link, unlink, the PAM module's two routes.
    public static let loginLink = "/v1/login-link"
    /// `POST /v1/login-link/remove`: unties the login keybag from the login password (``UnlinkLoginRequest``).
    public static let loginLinkRemove = "/v1/login-link/remove"
    /// `POST /v1/login-link/unlock`: the PAM module unlocks with the login password (``LoginUnlockRequest``).
    public static let loginLinkUnlock = "/v1/login-link/unlock"
    /// `POST /v1/login-link/password-changed`: the PAM module follows a login password change
    /// (``LoginPasswordChangedRequest``).
    public static let loginLinkPasswordChanged = "/v1/login-link/password-changed"
    /// `POST /v1/holds`: holds off auto-lock (``HoldRequest`` → ``Hold``); `DELETE /v1/holds/{id}`
    /// on the same connection ends the hold.
    public static let holds = "/v1/holds"
    /// `GET /v1/doctor`: the daemon's own environment checks (``DoctorReport``).
    public static let doctor = "/v1/doctor"
    /// `POST /v1/items/add`: adds an item, `SecItemAdd` (``AddItemRequest`` → `KeychainItem`).
    public static let addItem = "/v1/items/add"
    /// `POST /v1/items/search`: finds items, `SecItemCopyMatching` (``SearchItemsRequest`` → ``ItemsResponse``).
    public static let searchItems = "/v1/items/search"
    /// `GET /v1/items/secret`: one item's secret as raw bytes, asked by a query string (``ItemSecretQuery``).
    public static let itemSecret = "/v1/items/secret"
    /// A find's attributes without JSON (``ItemAttributesList``), by the query string of ``itemSecret``.
    public static let itemAttributes = "/v1/items/attributes"
    /// `POST /v1/items/update`: changes every matching item, `SecItemUpdate` (``UpdateItemsRequest`` → ``CountResponse``).
    public static let updateItems = "/v1/items/update"
    /// `POST /v1/items/delete`: deletes every matching item, `SecItemDelete` (``DeleteItemsRequest`` → ``CountResponse``).
    public static let deleteItems = "/v1/items/delete"
    /// `POST /v1/apps` registers an application (``RegisterApplicationRequest``); `GET /v1/apps`
    /// lists them (``ApplicationsResponse``). The `tresor` CLI only.
    public static let applications = "/v1/apps"
    /// Unregisters an application, with the passcode again (``RemoveApplicationRequest``).
    public static let removeApplication = "/v1/apps/remove"
    /// `GET /v1/keychains` lists every keychain (``KeychainsResponse``); `POST /v1/keychains`
    /// creates one (``CreateKeychainRequest``, the `tresor` CLI only).
    public static let keychains = "/v1/keychains"
    /// `POST /v1/keychains/delete`: deletes a created keychain and its items (``DeleteKeychainRequest``).
    public static let deleteKeychain = "/v1/keychains/delete"
    /// `tresor approve`: the next application waiting for the user's presence (long poll).
    public static let approvalsNext = "/v1/approvals/next"
    /// `tresor approve`: the user's answer, with the passcode when it allows.
    public static let approvalsAnswer = "/v1/approvals/answer"

    // Notes (docs/API.md, "Notes"): the `tresor` CLI, and most also applications with their
    // team's notes group ("Notes for applications"). Every route is a POST.
    /// The notes, or one folder's (``ListNotesRequest`` → ``NotesResponse``).
    public static let notesList = "/v1/notes/list"
    /// Creates an unlocked note (``CreateNoteRequest`` → `NoteSummary`).
    public static let notesCreate = "/v1/notes/create"
    /// A note with its body and attachments (``NoteRequest`` → `OpenedNote`).
    public static let notesShow = "/v1/notes/show"
    /// Changes a note's title, body, pin or folder (``EditNoteRequest`` → `NoteSaveOutcome`).
    public static let notesEdit = "/v1/notes/edit"
    /// Moves a note to Recently Deleted (``NoteRequest`` → `204`).
    public static let notesDelete = "/v1/notes/delete"
    /// Finds notes by words (``SearchNotesRequest`` → ``NotesResponse``).
    public static let notesSearch = "/v1/notes/search"
    /// The notes in Recently Deleted (→ ``NotesResponse``).
    public static let notesRecentlyDeleted = "/v1/notes/recently-deleted"
    /// Brings a note back from Recently Deleted (``NoteRequest`` → `NoteSummary`).
    public static let notesRestore = "/v1/notes/recently-deleted/restore"
    /// Deletes a note in Recently Deleted for good (``NoteRequest`` → `204`).
    public static let notesDeleteForGood = "/v1/notes/recently-deleted/delete"
    /// Deletes every note in Recently Deleted for good (→ ``EmptiedResponse``).
    public static let notesEmptyRecentlyDeleted = "/v1/notes/recently-deleted/empty"
    /// The folders (→ ``FoldersResponse``).
    public static let notesFolders = "/v1/notes/folders"
    /// Creates a folder, or answers the one of that name (``FolderRequest`` → `Folder`).
    public static let notesCreateFolder = "/v1/notes/folders/create"
    /// Deletes an empty folder (``FolderRequest`` → ``FoldersResponse``).
    public static let notesDeleteFolder = "/v1/notes/folders/delete"
    /// Locks a note with the current passphrase (``NoteRequest`` → `NoteSummary`).
    public static let notesLock = "/v1/notes/lock"
    /// Removes a note's lock (``NoteRequest`` → `NoteSummary`).
    public static let notesRemoveLock = "/v1/notes/remove-lock"
    /// Re-wraps a note under the current passphrase (``RewrapNoteRequest`` → `NoteSummary`).
    public static let notesRewrap = "/v1/notes/rewrap"
    /// Lock Now: ends every secure session (→ ``LockNowResponse``).
    public static let notesLockNow = "/v1/notes/lock-now"
    /// Opens a secure session (``OpenSessionRequest`` → `204`).
    public static let notesSession = "/v1/notes/session"
    /// Adds an attachment: the file's raw bytes, with the headers of ``NotesWire`` (→ `AttachmentInfo`).
    public static let notesAddAttachment = "/v1/notes/attachments/add"
    /// An attachment's raw bytes (``AttachmentRequest``).
    public static let notesGetAttachment = "/v1/notes/attachments/get"
    /// Removes an attachment (``RemoveAttachmentRequest`` → `NoteSummary`).
    public static let notesRemoveAttachment = "/v1/notes/attachments/remove"
    /// Where the notes passphrase stands (→ ``NotesPassphraseStatus``).
    public static let notesPassphraseStatus = "/v1/notes/passphrase/status"
    /// Sets the first notes passphrase (``SetPassphraseRequest`` → ``NotesPassphraseStatus``).
    public static let notesSetPassphrase = "/v1/notes/passphrase/set"
    /// Changes the notes passphrase (``ChangePassphraseRequest`` → ``NotesPassphraseStatus``).
    public static let notesChangePassphrase = "/v1/notes/passphrase/change"
    /// How far a passphrase change in flight is (→ ``PassphraseChangeProgress``).
    public static let notesPassphraseProgress = "/v1/notes/passphrase/progress"
    /// Resets a forgotten notes passphrase (``ResetPassphraseRequest`` → ``NotesPassphraseStatus``).
    public static let notesResetPassphrase = "/v1/notes/passphrase/reset"
    /// The current passphrase's hint (→ ``HintResponse``).
    public static let notesHint = "/v1/notes/passphrase/hint"
    /// Replaces or removes the hint (``SetHintRequest`` → ``NotesPassphraseStatus``).
    public static let notesSetHint = "/v1/notes/passphrase/hint/set"
    /// Keeps the passphrase key in the keychain, or stops (``KeychainUnlockRequest`` → ``NotesPassphraseStatus``).
    public static let notesKeychainUnlock = "/v1/notes/passphrase/keychain"
    /// Imports notes read from another store (``ImportNotesRequest`` → `ImportReport`).
    public static let notesImport = "/v1/notes/import"
    /// Marks an attachment left out of backups, or back in.
    public static let notesAttachmentBackup = "/v1/notes/attachments/backup"

    // Backups (docs/API.md, "Backups"): the `tresor` CLI only.
    /// Writes a backup of the whole home to a file (``BackupCreateRequest`` → ``BackupReport``).
    public static let backupCreate = "/v1/backup/create"
    /// Reads a backup file to its end and checks it (``BackupVerifyRequest`` → ``BackupReport``).
    public static let backupVerify = "/v1/backup/verify"
    /// Restores a backup into this home, or says what it would restore (``BackupRestoreRequest`` → ``BackupReport``).
    public static let backupRestore = "/v1/backup/restore"
    /// How far the backup operation in flight is (→ ``BackupProgress``).
    public static let backupProgress = "/v1/backup/progress"
}
