import Foundation
import TresorKeychain
import TresorModel
import TresorNotes

/// What the format says of each record's fields (docs/FORMAT.md, "Backups"), checked as the
/// stream is read, so a verify and a restore refuse the same files: an `I` record holds no
/// `…ThisDeviceOnly` item (those are sealed, in `D` records), a `D` record nothing else; item ids
/// are row ids in decimal; note, folder and attachment ids are UUIDs; account ids are `local`,
/// `team:TEAM` or a UUID. A writer never writes anything else, and ids reach file names and
/// report lines.
enum BackupRecordRules {
    /// - Throws: ``BackupError/forbidden(_:)`` naming the rule `record` breaks.
    static func check(_ record: BackupRecord) throws {
        switch record {
        case .item(let record):
            guard !record.item.protectionClass.isThisDeviceOnly else {
                throw BackupError.forbidden("an item record holds a …ThisDeviceOnly item (those are only in device-bound records)")
            }
            try rowID(record.item.id)
        case .deviceBoundItem(let record):
            guard record.protectionClass.isThisDeviceOnly, record.protectionClass != .whenPasscodeSetThisDeviceOnly else {
                throw BackupError.forbidden("a device-bound record holds an item of class \(record.protectionClass.rawValue)")
            }
            try rowID(record.id)
        case .account(let account):
            try accountID(account.id)
        case .passphrase(let passphrase):
            try accountID(passphrase.account)
            guard passphrase.id > 0 else { throw BackupError.forbidden("a passphrase record's id is not an id") }
        case .folder(let folder):
            try uuid(folder.id, "a folder record's id")
            try accountID(folder.account)
        case .note(let note):
            try uuid(note.id, "a note record's id")
            try accountID(note.account)
            if let folder = note.folder { try uuid(folder, "a note record's folder") }
            for participant in note.participants { try accountID(participant.account) }
        case .attachment(let attachment):
            try uuid(attachment.id, "an attachment record's id")
            try uuid(attachment.note, "an attachment record's note")
        case .leftOut(let leftOut):
            guard leftOut.id.utf8.count <= 64, !leftOut.id.contains(where: { $0.isNewline }) else {
                throw BackupError.forbidden("a left-out record's id is not an id")
            }
        case .manifest, .application, .piece, .attachmentEnd, .trailer:
            break
        }
    }

    /// A row id in decimal, as a keychain writes it: positive, no sign, no leading zero.
    private static func rowID(_ id: String) throws {
        guard let value = Int64(id), value > 0, String(value) == id else {
            throw BackupError.forbidden("an item's id is not a row id in decimal")
        }
    }

    private static func uuid(_ id: String, _ what: String) throws {
        guard id.utf8.count == 36, UUID(uuidString: id) != nil else { throw BackupError.forbidden("\(what) is not an id") }
    }

    private static func accountID(_ id: String) throws {
        if id == AccountID.local.rawValue || (id.utf8.count == 36 && UUID(uuidString: id) != nil) { return }
        if id.hasPrefix("team:"), id.dropFirst(5).wholeMatch(of: /[A-Za-z0-9]{1,32}/) != nil { return }
        throw BackupError.forbidden("an account id is not an id")
    }
}
