// Fuzzes RecordStreamReader (TresorBackup), the parser of a backup's payload: the record stream
// inside the age file, which `tresor backup verify|restore` read from a file anyone may hand
// the user (docs/FORMAT.md, "Backups"). Besides "never crash", checks its promises: it refuses
// only with BackupError; it never returns more records than the trailer counted; and what
// RecordStreamWriter wrote reads back, record for record, while the same stream cut short at a
// record's edge, or with its trailer's counts changed, is refused.
//
// Input: mode byte | payload
//   mode even: the payload is a record stream (magic, version, records), sealed in an age file
//              with the fixed passphrase and read;
//   mode odd:  the payload's bytes become attachment pieces (split where the mode says) between
//              a manifest and an item, written, read back and compared.
// The age layer is fuzzed by `age-file`; work factor 1 keeps each input cheap.
import Foundation
import FuzzSupport
import TresorAge
import TresorBackup
import TresorCrypto
import TresorKeychain
import TresorNotes

let passphrase = SecretText("fuzzing passphrase")

func read(_ file: Data) throws -> [BackupRecord] {
    var remaining = file[...]
    var reader = try RecordStreamReader(passphrase: passphrase, maximumWorkFactor: 2) { count in
        let next = remaining.prefix(count)
        remaining = remaining.dropFirst(next.count)
        return Data(next)
    }
    var records: [BackupRecord] = []
    while let record = try reader.next() {
        records.append(record)
        if records.count > 100_000 { fuzzFailure("more records than any input this size holds") }
    }
    return records
}

func write(_ records: [BackupRecord], finish: Bool = true) throws -> Data {
    var file = Data()
    var writer = try RecordStreamWriter(passphrase: passphrase, workFactor: 1) { file += $0 }
    for record in records { try writer.write(record) }
    if finish { try writer.finish() }
    return file
}

let manifest = BackupRecord.manifest(
    BackupManifest(
        format: "tresor-backup", version: 1, created: Date(timeIntervalSince1970: 1_800_000_000), deviceID: Data(count: 16),
        importTagKeyID: nil, keychains: ["login"]))

func item() -> BackupRecord {
    var attributes = ItemAttributes()
    attributes.service = "fuzz"
    attributes.accessGroup = "tresor"
    attributes.accessible = .whenUnlocked
    return .item(
        ItemRecord(keychain: "login", item: BackedUpItem(itemClass: .genericPassword, id: "1", attributes: attributes, secret: Data("s".utf8))))
}

func pieces(_ payload: Data, mode: UInt8) -> [BackupRecord] {
    let size = max(1, Int(mode) * 37)
    var records: [BackupRecord] = [
        .attachment(
            BackedUpAttachment(
                // Ids as the format requires them (UUIDs): the reader refuses any other.
                id: "6F1C2A7E-0B1D-4C3E-9A5F-2D8E7B6C5A41", note: "0A9B8C7D-6E5F-4A3B-8C2D-1E0F9A8B7C6D", kind: .file, name: "f",
                byteCount: payload.count, created: Date(timeIntervalSince1970: 0), isLocked: false,
                excludedFromBackup: false))
    ]
    var start = payload.startIndex
    while start < payload.endIndex {
        let end = min(payload.endIndex, start + size)
        records.append(.piece(Data(payload[start..<end])))
        start = end
    }
    return records + [.attachmentEnd]
}

func seeds() throws -> [String: Data] {
    let magic = Data("tresor-backup\n".utf8) + [1]
    func payload(of records: [BackupRecord]) throws -> Data {
        try AgeFile.decrypt(try write(records), passphrase: passphrase)
    }
    return [
        "stream-whole": Data([0]) + (try payload(of: [manifest, item()] + pieces(Data("bytes".utf8), mode: 1))),
        "stream-manifest-only": Data([0]) + (try payload(of: [manifest])),
        "stream-no-trailer": Data([0]) + magic + (try payload(of: [manifest]).dropFirst(magic.count).prefix(200)),
        "stream-other-version": Data([0]) + Data("tresor-backup\n".utf8) + [2],
        "roundtrip-empty": Data([1]),
        "roundtrip-bytes": Data([5]) + Data("some attachment bytes".utf8),
    ]
}

fuzz(seeds: seeds) { data in
    guard let mode = data.first else { return }
    let payload = Data(data.dropFirst())
    if mode % 2 == 0 {
        let file: Data
        do {
            file = try AgeFile.encrypt(payload, passphrase: passphrase, workFactor: 1)
        } catch {
            fuzzFailure("encrypting failed: \(error)")
        }
        do {
            let records = try read(file)
            guard case .trailer(let trailer) = records.last else { fuzzFailure("a stream was accepted without its trailer") }
            if trailer.records.values.reduce(0, +) != records.count - 1 { fuzzFailure("the trailer does not count the records returned") }
        } catch is BackupError {
        } catch {
            fuzzFailure("refused with \(type(of: error)), not BackupError")
        }
        return
    }
    let records = [manifest, item()] + pieces(payload, mode: mode)
    let file: Data
    do {
        file = try write(records)
    } catch {
        fuzzFailure("writing failed: \(error)")
    }
    guard let readBack = try? read(file), readBack.count == records.count + 1 else { fuzzFailure("a written stream did not read back") }
    var bytes = Data()
    for case .piece(let piece) in readBack { bytes += piece }
    if bytes != payload { fuzzFailure("attachment pieces did not read back") }
    // The same records without a trailer (cut at a record's edge), and with every record but the last.
    if (try? read(try write(records, finish: false))) != nil { fuzzFailure("a stream without its final chunk was read") }
    let cut = try? AgeFile.encrypt(try AgeFile.decrypt(file, passphrase: passphrase).dropLast(5), passphrase: passphrase, workFactor: 1)
    if let cut, (try? read(cut)) != nil { fuzzFailure("a stream cut before its trailer's end was read") }
}
