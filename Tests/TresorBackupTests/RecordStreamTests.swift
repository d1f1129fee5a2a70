import Foundation
import Testing
import TresorAge
import TresorBackup
import TresorCrypto
import TresorKeychain
import TresorNotes

/// The record stream's reader refuses, with its own error, every stream the writer would not
/// write: out of order, miscounted, cut at a record's edge (which the age layer cannot see when
/// the cut falls on a chunk's edge and the writer's bug sealed it final), or not a backup.
struct RecordStreamTests {
    static let passphrase = SecretText("record stream")

    static var manifest: BackupRecord {
        .manifest(
            BackupManifest(
                format: "tresor-backup", version: 1, created: Date(timeIntervalSince1970: 1_800_000_000),
                deviceID: Data(count: 16), importTagKeyID: nil, keychains: ["login"]))
    }

    static var item: BackupRecord {
        var attributes = ItemAttributes()
        attributes.service = "s"
        attributes.accessGroup = "tresor"
        attributes.accessible = .whenUnlocked
        return .item(
            ItemRecord(keychain: "login", item: BackedUpItem(itemClass: .genericPassword, id: "7", attributes: attributes, secret: Data("x".utf8))))
    }

    /// A file of `records`, ended by a trailer counting them.
    static func file(_ records: [BackupRecord]) throws -> Data {
        var file = Data()
        var writer = try RecordStreamWriter(passphrase: passphrase, workFactor: 2) { file += $0 }
        for record in records { try writer.write(record) }
        try writer.finish()
        return file
    }

    /// A file of raw payload bytes (for streams the writer would never write).
    static func raw(_ payload: Data) throws -> Data {
        try AgeFile.encrypt(payload, passphrase: passphrase, workFactor: 2)
    }

    static func read(_ file: Data) throws -> [BackupRecord] {
        var remaining = file[...]
        var reader = try RecordStreamReader(passphrase: passphrase) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
        var records: [BackupRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    static func frame(_ kind: UInt8, _ body: Data) -> Data {
        var data = Data([kind])
        withUnsafeBytes(of: UInt32(body.count).bigEndian) { data.append(contentsOf: $0) }
        return data + body
    }

    @Test func whatTheWriterWritesTheReaderReadsBack() throws {
        let piece = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let attachment = BackedUpAttachment(
            id: UUID().uuidString.lowercased(), note: UUID().uuidString.lowercased(), kind: .file, name: "f", byteCount: piece.count,
            created: Date(timeIntervalSince1970: 1), isLocked: false,
            excludedFromBackup: false)
        let records = try Self.read(try Self.file([Self.manifest, Self.item, .attachment(attachment), .piece(piece), .attachmentEnd]))
        #expect(records.count == 6)
        guard case .piece(let read) = records[3] else { Issue.record("no piece"); return }
        #expect(read == piece)
        guard case .trailer(let trailer) = records[5] else { Issue.record("no trailer"); return }
        #expect(
            trailer.records == ["manifest": 1, "item": 1, "attachment": 1, "piece": 1, "attachmentEnd": 1] && trailer.attachmentBytes == piece.count)
    }

    @Test func aStreamWithoutItsTrailerIsDamaged() throws {
        let payload = Data("tresor-backup\n".utf8) + [1] + Self.frame(0x4D, try JSONEncoder.backupRecords.encode(ManifestBody()))
        #expect(throws: BackupError.damaged("the stream ends before its trailer")) { try Self.read(try Self.raw(payload)) }
    }

    @Test func aTrailerThatDoesNotCountWhatCameBeforeIsDamaged() throws {
        let manifest = try JSONEncoder.backupRecords.encode(ManifestBody())
        let trailer = Data(#"{"attachmentBytes":0,"records":{"manifest":1,"item":2}}"#.utf8)
        let payload = Data("tresor-backup\n".utf8) + [1] + Self.frame(0x4D, manifest) + Self.frame(0x5A, trailer)
        #expect(throws: BackupError.damaged("the trailer's counts do not match the records")) { try Self.read(try Self.raw(payload)) }
    }

    @Test func recordsOutOfOrderAreDamaged() throws {
        let magic = Data("tresor-backup\n".utf8) + [1]
        let manifest = Self.frame(0x4D, try JSONEncoder.backupRecords.encode(ManifestBody()))
        #expect(throws: BackupError.damaged("the stream does not start with its manifest")) {
            try Self.read(try Self.raw(magic + Self.frame(0x45, Data()) + manifest))
        }
        #expect(throws: BackupError.damaged("attachment bytes outside an attachment")) {
            try Self.read(try Self.raw(magic + manifest + Self.frame(0x42, Data([1, 2, 3]))))
        }
        #expect(throws: BackupError.damaged("a record of unknown kind 113")) {
            try Self.read(try Self.raw(magic + manifest + Self.frame(0x71, Data())))
        }
        #expect(throws: BackupError.damaged("the stream ends inside a record")) {
            try Self.read(try Self.raw(magic + manifest + Data([0x49, 0, 0, 1, 0, 1, 2])))
        }
        #expect(throws: BackupError.damaged("a piece record is larger than the format allows")) {
            try Self.read(try Self.raw(magic + manifest + Data([0x42, 0x7F, 0, 0, 0])))
        }
    }

    /// What the writer never writes, in records otherwise well formed: refused by the reader, so
    /// by a verify and a restore alike.
    @Test func recordsTheFormatForbidsAreRefused() throws {
        guard case .item(let plain) = Self.item else { Issue.record("no item"); return }
        var deviceBound = plain
        deviceBound.item.attributes.accessible = .afterFirstUnlockThisDeviceOnly
        #expect(throws: BackupError.forbidden("an item record holds a …ThisDeviceOnly item (those are only in device-bound records)")) {
            try Self.read(try Self.file([Self.manifest, .item(deviceBound)]))
        }
        for id in ["+7", "07", "0", "-7", "7 ", "x"] {
            var badID = plain
            badID.item.id = id
            #expect(throws: BackupError.forbidden("an item's id is not a row id in decimal"), "\(id)") {
                try Self.read(try Self.file([Self.manifest, .item(badID)]))
            }
        }
        for id in ["../a", "a", "", String(repeating: "0", count: 36)] {
            let attachment = BackedUpAttachment(
                id: id, note: UUID().uuidString, kind: .file, name: "f", byteCount: 0, created: Date(timeIntervalSince1970: 1), isLocked: false,
                excludedFromBackup: false)
            #expect(throws: BackupError.forbidden("an attachment record's id is not an id"), "\(id)") {
                try Self.read(try Self.file([Self.manifest, .attachment(attachment), .attachmentEnd]))
            }
        }
    }

    @Test func anAgeFileThatIsNotARecordStreamIsNotABackup() throws {
        #expect(throws: BackupError.notABackup) { try Self.read(try Self.raw(Data("hello, this is text".utf8))) }
        #expect(throws: BackupError.notABackup) { try Self.read(try Self.raw(Data())) }
        #expect(throws: BackupError.unsupportedVersion(2)) { try Self.read(try Self.raw(Data("tresor-backup\n".utf8) + [2])) }
    }

    @Test func theAgeLayersRefusalsComeThroughNamed() throws {
        let file = try Self.file([Self.manifest, Self.item])
        #expect(throws: BackupError.file(.wrongPassphrase)) {
            var remaining = file[...]
            _ = try RecordStreamReader(passphrase: SecretText("wrong")) { count in
                let next = remaining.prefix(count)
                remaining = remaining.dropFirst(next.count)
                return Data(next)
            }
        }
        do {
            _ = try Self.read(file.dropLast(1))
            Issue.record("a cut file was read")
        } catch let error as BackupError {
            guard case .file = error else { Issue.record("not the age layer's refusal: \(error)"); return }
        }
    }
}

/// A manifest's JSON, written by hand for the raw streams above.
private struct ManifestBody: Encodable {
    var format = "tresor-backup"
    var version = 1
    var created = 1_800_000_000
    var deviceID = "AAAAAAAAAAAAAAAAAAAAAA=="
    var keychains = ["login"]
}

extension JSONEncoder {
    static var backupRecords: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
