import Foundation
import TresorKeychain
import TresorNotes
import TresorProtocol

/// The first record: what the backup is and where it was made.
public struct BackupManifest: Codable, Equatable, Sendable {
    /// Always `tresor-backup`.
    public var format: String
    /// The record stream's version (``BackupFormat/version``).
    public var version: Int
    public var created: Date
    /// The home's ``TresorKeybag/Keybag/backupDeviceID``: a restore into the home with the same
    /// device key restores the `…ThisDeviceOnly` items.
    public var deviceID: Data
    /// The notes' ``TresorNotes/NotesStore/importTagKeyID``, when the notes were read.
    public var importTagKeyID: Data?
    /// The keychains the backup holds items of.
    public var keychains: [String]

    /// - Parameters:
    ///   - format: `tresor-backup`.
    ///   - version: the record stream's version.
    ///   - created: when the backup was made.
    ///   - deviceID: the home's device id.
    ///   - importTagKeyID: the notes' import-tag key id, if known.
    ///   - keychains: the keychains the backup holds items of.
    public init(format: String, version: Int, created: Date, deviceID: Data, importTagKeyID: Data?, keychains: [String]) {
        self.format = format
        self.version = version
        self.created = created
        self.deviceID = deviceID
        self.importTagKeyID = importTagKeyID
        self.keychains = keychains
    }
}

/// A keychain item, opened: attributes and secret.
public struct ItemRecord: Codable, Equatable, Sendable {
    public var keychain: String
    public var item: BackedUpItem

    /// - Parameters:
    ///   - keychain: the item's keychain.
    ///   - item: the item.
    public init(keychain: String, item: BackedUpItem) {
        self.keychain = keychain
        self.item = item
    }
}

/// A `…ThisDeviceOnly` item: only its keychain, class, id and protection class are in the
/// clear (inside the age payload); the item itself is an envelope under the home's
/// ``TresorKeybag/Keybag/backupDeviceItemsKey``, associated data
/// `tresor.backup.v1/device-item/<keychain>/<table>/<id>/<protection class>`.
public struct DeviceBoundItemRecord: Codable, Equatable, Sendable {
    public var keychain: String
    public var itemClass: ItemClass
    public var id: String
    public var protectionClass: ProtectionClass
    public var sealed: Data

    static func associatedData(keychain: String, itemClass: ItemClass, id: String, protectionClass: ProtectionClass) -> Data {
        Data("tresor.backup.v1/device-item/\(keychain)/\(itemClass.rawValue)/\(id)/\(protectionClass.rawValue)".utf8)
    }
}

/// Something of the home the backup does not hold, and why: counted, and listed in the report.
public struct LeftOutRecord: Codable, Equatable, Sendable {
    public var kind: BackupEntryKind
    public var id: String
    public var keychain: String?
    public var description: String
    public var reason: BackupReason
    public var detail: String?

    var entry: BackupReportEntry {
        BackupReportEntry(kind: kind, id: id, keychain: keychain, description: description, outcome: .leftOut, reason: reason, detail: detail)
    }
}

/// The last record: how many records of each kind came before it, so a reader knows it saw
/// the whole stream as written.
public struct BackupTrailer: Codable, Equatable, Sendable {
    /// Records by kind name (``BackupFormat/Kind``), the manifest included, the trailer not.
    public var records: [String: Int]
    /// The bytes of every attachment piece.
    public var attachmentBytes: Int
}

/// One record read from a backup, decoded.
public enum BackupRecord: Sendable {
    case manifest(BackupManifest)
    case item(ItemRecord)
    case deviceBoundItem(DeviceBoundItemRecord)
    case application(Application)
    case account(BackedUpAccount)
    case passphrase(BackedUpPassphrase)
    case folder(BackedUpFolder)
    case note(BackedUpNote)
    case attachment(BackedUpAttachment)
    case piece(Data)
    case attachmentEnd
    case leftOut(LeftOutRecord)
    case trailer(BackupTrailer)

    /// Decodes a record's body.
    /// - Throws: ``BackupError/damaged(_:)`` for a body that is not the record's JSON.
    init(kind: BackupFormat.Kind, body: Data) throws {
        let decoder = BackupFormat.decoder
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            do {
                return try decoder.decode(type, from: body)
            } catch {
                throw BackupError.damaged("a \(kind.name) record is not what the format says")
            }
        }
        switch kind {
        case .manifest: self = .manifest(try decode(BackupManifest.self))
        case .item: self = .item(try decode(ItemRecord.self))
        case .deviceBoundItem: self = .deviceBoundItem(try decode(DeviceBoundItemRecord.self))
        case .application: self = .application(try decode(Application.self))
        case .account: self = .account(try decode(BackedUpAccount.self))
        case .passphrase: self = .passphrase(try decode(BackedUpPassphrase.self))
        case .folder: self = .folder(try decode(BackedUpFolder.self))
        case .note: self = .note(try decode(BackedUpNote.self))
        case .attachment: self = .attachment(try decode(BackedUpAttachment.self))
        case .piece: self = .piece(body)
        case .attachmentEnd: self = .attachmentEnd
        case .leftOut: self = .leftOut(try decode(LeftOutRecord.self))
        case .trailer: self = .trailer(try decode(BackupTrailer.self))
        }
    }

    var kind: BackupFormat.Kind {
        switch self {
        case .manifest: .manifest
        case .item: .item
        case .deviceBoundItem: .deviceBoundItem
        case .application: .application
        case .account: .account
        case .passphrase: .passphrase
        case .folder: .folder
        case .note: .note
        case .attachment: .attachment
        case .piece: .piece
        case .attachmentEnd: .attachmentEnd
        case .leftOut: .leftOut
        case .trailer: .trailer
        }
    }

    /// The body as written.
    func body() throws -> Data {
        let encoder = BackupFormat.encoder
        switch self {
        case .manifest(let value): return try encoder.encode(value)
        case .item(let value): return try encoder.encode(value)
        case .deviceBoundItem(let value): return try encoder.encode(value)
        case .application(let value): return try encoder.encode(value)
        case .account(let value): return try encoder.encode(value)
        case .passphrase(let value): return try encoder.encode(value)
        case .folder(let value): return try encoder.encode(value)
        case .note(let value): return try encoder.encode(value)
        case .attachment(let value): return try encoder.encode(value)
        case .piece(let bytes): return bytes
        case .attachmentEnd: return Data()
        case .leftOut(let value): return try encoder.encode(value)
        case .trailer(let value): return try encoder.encode(value)
        }
    }
}
