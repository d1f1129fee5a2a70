import Foundation

// Opening a secure session by typing the current passphrase, without opening a note.
extension NotesStore {
    /// Checks `passphrase` against the account's current passphrase — typed: an open session
    /// is not accepted in its place — counting a wrong one like any other entry, and opens
    /// (or renews) its secure session. The daemon uses it before uploads to a locked note and
    /// to verify the passphrase before keeping its key in the keychain (docs/API.md, "Unlock
    /// through the keychain").
    public func openCurrentSession(with passphrase: Passphrase, account: AccountID = .local) throws {
        let record = try currentPassphrase(account)
        _ = try checkedKey(for: record, passphrase: passphrase, try sealing(), opensSession: true)
    }
}
