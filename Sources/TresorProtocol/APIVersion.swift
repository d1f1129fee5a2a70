/// The daemon's local API: HTTP/1.1 + JSON over the Unix socket, every path under
/// `/v<version>/`. Described in `docs/API.md` and `docs/openapi.yaml`.
///
/// A change that removes or renames a field or route makes a new version; adding optional
/// fields does not.
public enum APIVersion {
    public static let current = 1
    public static let pathPrefix = "/v1"
    /// Requests larger than this are refused with `requestTooLarge` (room for a 256 KiB
    /// secret in Base64 and its attributes).
    public static let maximumRequestBytes = 1024 * 1024
}

/// Tresor's release, which `tresor --version`, `tresord --version` and `GET /v1/status`
/// (`daemonVersion`) report.
public enum TresorVersion {
    public static let current = "0.1.0"
}

/// The routes of version 1, so client and server spell them once.
public enum Route {
    public static let status = "/v1/status"
    public static let initialize = "/v1/init"
    public static let unlock = "/v1/unlock"
    public static let lock = "/v1/lock"
    public static let changePasscode = "/v1/passcode/change"
    public static let removePasscode = "/v1/passcode/remove"
    /// Unlock at login (docs/API.md, "Login link"): link, unlink, the PAM module's two routes.
    public static let loginLink = "/v1/login-link"
    public static let loginLinkRemove = "/v1/login-link/remove"
    public static let loginLinkUnlock = "/v1/login-link/unlock"
    public static let loginLinkPasswordChanged = "/v1/login-link/password-changed"
    public static let holds = "/v1/holds"
    public static let doctor = "/v1/doctor"
    public static let addItem = "/v1/items/add"
    public static let searchItems = "/v1/items/search"
    public static let itemSecret = "/v1/items/secret"
    /// A find's attributes without JSON (``ItemAttributesList``), by the query string of ``itemSecret``.
    public static let itemAttributes = "/v1/items/attributes"
    public static let updateItems = "/v1/items/update"
    public static let deleteItems = "/v1/items/delete"
    public static let applications = "/v1/apps"
    /// Unregisters an application, with the passcode again (``RemoveApplicationRequest``).
    public static let removeApplication = "/v1/apps/remove"
    public static let keychains = "/v1/keychains"
    public static let deleteKeychain = "/v1/keychains/delete"
    /// `tresor approve`: the next application waiting for the user's presence (long poll).
    public static let approvalsNext = "/v1/approvals/next"
    /// `tresor approve`: the user's answer, with the passcode when it allows.
    public static let approvalsAnswer = "/v1/approvals/answer"

    // Notes (docs/API.md, "Notes"): the `tresor` CLI only. Every route is a POST.
    public static let notesList = "/v1/notes/list"
    public static let notesCreate = "/v1/notes/create"
    public static let notesShow = "/v1/notes/show"
    public static let notesEdit = "/v1/notes/edit"
    public static let notesDelete = "/v1/notes/delete"
    public static let notesSearch = "/v1/notes/search"
    public static let notesRecentlyDeleted = "/v1/notes/recently-deleted"
    public static let notesRestore = "/v1/notes/recently-deleted/restore"
    public static let notesDeleteForGood = "/v1/notes/recently-deleted/delete"
    public static let notesEmptyRecentlyDeleted = "/v1/notes/recently-deleted/empty"
    public static let notesFolders = "/v1/notes/folders"
    public static let notesCreateFolder = "/v1/notes/folders/create"
    public static let notesDeleteFolder = "/v1/notes/folders/delete"
    public static let notesLock = "/v1/notes/lock"
    public static let notesRemoveLock = "/v1/notes/remove-lock"
    public static let notesRewrap = "/v1/notes/rewrap"
    public static let notesLockNow = "/v1/notes/lock-now"
    public static let notesSession = "/v1/notes/session"
    public static let notesAddAttachment = "/v1/notes/attachments/add"
    public static let notesGetAttachment = "/v1/notes/attachments/get"
    public static let notesRemoveAttachment = "/v1/notes/attachments/remove"
    public static let notesPassphraseStatus = "/v1/notes/passphrase/status"
    public static let notesSetPassphrase = "/v1/notes/passphrase/set"
    public static let notesChangePassphrase = "/v1/notes/passphrase/change"
    public static let notesPassphraseProgress = "/v1/notes/passphrase/progress"
    public static let notesResetPassphrase = "/v1/notes/passphrase/reset"
    public static let notesHint = "/v1/notes/passphrase/hint"
    public static let notesSetHint = "/v1/notes/passphrase/hint/set"
    public static let notesKeychainUnlock = "/v1/notes/passphrase/keychain"
    public static let notesImport = "/v1/notes/import"
    /// Marks an attachment left out of backups, or back in.
    public static let notesAttachmentBackup = "/v1/notes/attachments/backup"

    // Backups (docs/API.md, "Backups"): the `tresor` CLI only.
    public static let backupCreate = "/v1/backup/create"
    public static let backupVerify = "/v1/backup/verify"
    public static let backupRestore = "/v1/backup/restore"
    public static let backupProgress = "/v1/backup/progress"
}
