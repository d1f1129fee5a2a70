import Foundation
import TresorModel

/// The record stream inside a backup's age payload (docs/FORMAT.md, "Backups"):
///
/// ```
/// "tresor-backup\n" ‖ version (1 byte, 1) ‖ record*
/// record = kind (1 byte, an ASCII letter) ‖ length (UInt32, big-endian) ‖ body (length bytes)
/// ```
///
/// Bodies are JSON objects (sorted keys, dates as seconds since 1970, bytes as Base64), but for
/// an attachment's pieces, which are raw bytes, and the end of an attachment, which is empty.
/// The manifest comes first, the trailer last; nothing may follow the trailer.
public enum BackupFormat {
    /// The stream's first bytes.
    public static let magic = Data("tresor-backup\n".utf8)
    /// The record stream's version; a reader refuses any other.
    public static let version: UInt8 = 1
    /// The largest JSON record a reader accepts: a locked note's ciphertext (up to 8 MiB, as an
    /// import accepts) in Base64 with its fields.
    public static let maximumJSONRecordBytes = 16 * 1024 * 1024
    /// The largest attachment piece: one 1 MiB chunk and what seals it.
    public static let maximumPieceBytes = 1024 * 1024 + 1024

    /// What a record holds.
    public enum Kind: UInt8, CaseIterable, Sendable {
        /// ``BackupManifest``: first, once.
        case manifest = 0x4D  // M
        /// A keychain item (``ItemRecord``).
        case item = 0x49  // I
        /// A `…ThisDeviceOnly` item, sealed under the home's device key (``DeviceBoundItemRecord``).
        case deviceBoundItem = 0x44  // D
        /// A registered application.
        case application = 0x41  // A
        /// A notes account.
        case account = 0x55  // U
        /// A notes passphrase record.
        case passphrase = 0x50  // P
        case folder = 0x46  // F
        case note = 0x4E  // N
        /// An attachment's description; its pieces and its end follow.
        case attachment = 0x54  // T
        /// A piece of the attachment's bytes (raw).
        case piece = 0x42  // B
        /// The end of the attachment (empty).
        case attachmentEnd = 0x45  // E
        /// Something left out of the backup, and why (``LeftOutRecord``).
        case leftOut = 0x58  // X
        /// ``BackupTrailer``: last, once.
        case trailer = 0x5A  // Z

        /// The name counts use for it (the trailer's, the report's).
        var name: String {
            switch self {
            case .manifest: "manifest"
            case .item: "item"
            case .deviceBoundItem: "deviceBoundItem"
            case .application: "application"
            case .account: "account"
            case .passphrase: "passphrase"
            case .folder: "folder"
            case .note: "note"
            case .attachment: "attachment"
            case .piece: "piece"
            case .attachmentEnd: "attachmentEnd"
            case .leftOut: "leftOut"
            case .trailer: "trailer"
            }
        }

        var maximumBodyBytes: Int {
            switch self {
            case .piece: BackupFormat.maximumPieceBytes
            case .attachmentEnd: 0
            default: BackupFormat.maximumJSONRecordBytes
            }
        }
    }

    /// The JSON coders of record bodies: the keychain's and the API's conventions.
    static var encoder: JSONEncoder { JSONStyle.secondsSince1970.encoder }
    static var decoder: JSONDecoder { JSONStyle.secondsSince1970.decoder }
}
