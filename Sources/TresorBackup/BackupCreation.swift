import Foundation
import TresorAge
import TresorCrypto
import TresorKeybag
import TresorKeychain
import TresorNotes
import TresorProtocol
import TresorSystem

/// What a backup reads: one home's keybag (for its device id and device-items key), its
/// keychains — the login keychain, which holds the application registry, first — and its notes.
public struct BackupSource {
    public var keybag: Keybag
    /// Every keychain of the home, by name, the login keychain first.
    public var keychains: [(name: String, keychain: KeychainStore)]
    public var notes: NotesStore

    /// - Parameters:
    ///   - keybag: the home's login keybag (unlocked).
    ///   - keychains: every keychain of the home by name, the login keychain first.
    ///   - notes: the home's notes.
    public init(keybag: Keybag, keychains: [(name: String, keychain: KeychainStore)], notes: NotesStore) {
        self.keybag = keybag
        self.keychains = keychains
        self.notes = notes
    }
}

/// Writes a backup of a whole home (docs/FORMAT.md, "Backups"): every item of every keychain
/// (`whenPasscodeSetThisDeviceOnly` ones counted only; the other `…ThisDeviceOnly` ones sealed
/// under the device key), the application registry, the notes of every account with their
/// passphrase records, and the attachments not left out. Each database is read in one read
/// transaction; anything that cannot be read is reported and left out, never a reason to stop.
public enum BackupCreation {
    /// The scrypt work factor a backup is written with unless the user picks another: the one
    /// `age -p` uses, 256 MiB and about a second (BENCHMARKS.md).
    public static let defaultWorkFactor = ScryptStanza.defaultWorkFactor
    /// The work factors a backup may be written with: below 2^14 a guess costs next to nothing,
    /// and above age's own maximum a reader refuses the file.
    public static let workFactors = 14...ScryptStanza.maximumWorkFactor

    /// Writes the backup of `source` to `url` (through `url.partial`, fsynced, renamed).
    ///
    /// The backup passphrase's scrypt run seals only the header; the payload needs just the
    /// file key. So the KDF runs on a thread of its own while `presence` is checked and the home
    /// is read and sealed, and the header is written before the payload at the end.
    /// - Parameters:
    ///   - source: the home.
    ///   - url: the backup file.
    ///   - passphrase: the backup passphrase (UTF-8 bytes, not empty).
    ///   - workFactor: scrypt's log2(N).
    ///   - presence: the check the home may not be read without (the user's passcode); it runs
    ///     beside the KDF, before anything is read.
    ///   - progress: told how far the backup got.
    /// - Returns: what was written and what was left out.
    /// - Throws: ``BackupError`` when the file cannot be written or the parameters are bad;
    ///   ``StorageRefusal/diskFull`` when the file's disk has less free space than the backup
    ///   is estimated to take (checked before anything is written), or fills up; what `presence`
    ///   throws; storage errors of the stores.
    public static func create(
        _ source: BackupSource, to url: URL, passphrase: SecretText, workFactor: Int, presence: () throws -> Void,
        progress: BackupProgressTracker
    ) throws -> BackupReport {
        guard passphrase.byteCount > 0 else { throw CryptoError.invalidParameter("the backup passphrase is empty") }
        let key: AgeFileKey
        do {
            key = try AgeFileKey(workFactor: workFactor)
        } catch let error as AgeError {
            throw BackupError.file(error)
        }
        let headerByteCount = key.headerByteCount
        let header = Background { try key.header(passphrase: passphrase) }
        // However this ends, the KDF's memory is not left running past the request.
        defer { _ = try? header.value() }
        try presence()
        let size = try source.notes.backupSize()
        let itemCount = try source.keychains.reduce(0) { $0 + (try $1.keychain.itemCount()) }
        let estimate = size.attachmentBytes + (itemCount + size.notes) * 1024
        // Refused before anything is written rather than stopped by the disk half-way.
        if let available = SecureFiles.availableBytes(at: url.deletingLastPathComponent()), available < estimate + headerByteCount {
            throw StorageRefusal.diskFull
        }
        progress.start("create", bytesTotal: estimate)
        defer { progress.finish() }
        var builder = BackupReportBuilder(operation: "create", path: url.path, listsEverything: false)
        var written = 0
        try BackupFile.write(to: url, header: (headerByteCount, { try header.value() })) { output in
            let counted: (Data) throws -> Void = { bytes in
                try progress.checkCancelled()
                try output(bytes)
                written += bytes.count
                progress.update(bytesDone: written)
            }
            var writer = try RecordStreamWriter(payloadOf: key, output: counted)
            try writer.write(
                .manifest(
                    BackupManifest(
                        format: "tresor-backup", version: Int(BackupFormat.version), created: Date(), deviceID: source.keybag.backupDeviceID,
                        importTagKeyID: try? source.notes.importTagKeyID, keychains: source.keychains.map(\.name))))
            var session = CreationSession(writer: writer, builder: builder, keybag: source.keybag, progress: progress)
            for (index, (name, keychain)) in source.keychains.enumerated() {
                // The registry is in the login keychain's database: read in the same transaction.
                let applications: (([Application]) throws -> Void)? = index == 0 ? { try session.write($0) } : nil
                try keychain.readAllItems(applications: applications) { try session.write($0, keychain: name) }
            }
            try source.notes.readAllForBackup { try session.write($0) }
            try session.writer.finish()
            builder = session.builder
        }
        builder.report.bytes = written + headerByteCount
        builder.report.workFactor = workFactor
        builder.report.created = Date()
        builder.report.sameHome = true
        return builder.report
    }
}

/// One backup being written: the writer, the report, the device-items key.
private struct CreationSession {
    var writer: RecordStreamWriter
    var builder: BackupReportBuilder
    let keybag: Keybag
    let progress: BackupProgressTracker
    /// The attachment being written, for the report once its end is written.
    private var attachment: BackedUpAttachment?

    init(writer: RecordStreamWriter, builder: BackupReportBuilder, keybag: Keybag, progress: BackupProgressTracker) {
        self.writer = writer
        self.builder = builder
        self.keybag = keybag
        self.progress = progress
    }

    mutating func write(_ applications: [Application]) throws {
        for application in applications {
            try writer.write(.application(application))
            add(BackupReportEntry(kind: .application, id: application.applicationID, description: application.applicationID, outcome: .backedUp))
        }
    }

    mutating func write(_ reading: ItemReading, keychain: String) throws {
        switch reading {
        case .item(let item):
            let description = ItemDescription.of(item)
            let entry = BackupReportEntry(kind: .item, id: item.id, keychain: keychain, description: description, outcome: .backedUp)
            if item.protectionClass.requiresPasscode {
                return try leaveOut(.item, item.id, keychain: keychain, description, .passcodeSetOnly)
            }
            if item.protectionClass.isThisDeviceOnly {
                let associatedData = DeviceBoundItemRecord.associatedData(
                    keychain: keychain, itemClass: item.itemClass, id: item.id, protectionClass: item.protectionClass)
                let sealed = try Envelope.seal(
                    try BackupFormat.encoder.encode(item), using: keybag.backupDeviceItemsKey, authenticating: associatedData)
                try writer.write(
                    .deviceBoundItem(
                        DeviceBoundItemRecord(
                            keychain: keychain, itemClass: item.itemClass, id: item.id, protectionClass: item.protectionClass, sealed: sealed)))
            } else {
                try writer.write(.item(ItemRecord(keychain: keychain, item: item)))
            }
            add(entry)
        case .unreadable(let itemClass, let id, let protectionClass, let reason):
            let description = "\(itemClass.rawValue) item \(id)"
            if protectionClass == ProtectionClass.whenPasscodeSetThisDeviceOnly.rawValue {
                return try leaveOut(.item, id, keychain: keychain, description, .passcodeSetOnly)
            }
            try leaveOut(.item, id, keychain: keychain, description, .unreadable, detail: reason)
        }
    }

    mutating func write(_ reading: NotesReading) throws {
        switch reading {
        case .account(let account):
            try writer.write(.account(account))
            add(BackupReportEntry(kind: .account, id: account.id, description: account.loginName ?? account.name, outcome: .backedUp))
        case .passphrase(let passphrase):
            try writer.write(.passphrase(passphrase))
            builder.count(.passphrase, .backedUp)
        case .folder(let folder):
            try writer.write(.folder(folder))
            builder.count(.folder, .backedUp)
        case .note(let note):
            try writer.write(.note(note))
            add(BackupReportEntry(kind: .note, id: note.id, description: note.title, outcome: .backedUp))
        case .attachment(let attachment):
            try writer.write(.attachment(attachment))
            self.attachment = attachment
        case .attachmentPiece(let piece):
            try writer.write(.piece(piece))
        case .attachmentEnd:
            try writer.write(.attachmentEnd)
            if let attachment { add(BackupReportEntry(kind: .attachment, id: attachment.id, description: attachment.name, outcome: .backedUp)) }
            attachment = nil
        case .attachmentAbandoned(let reason):
            // Its pieces are in the stream already: it ends, and the record after it tells a
            // restore to drop it.
            try writer.write(.attachmentEnd)
            let abandoned = attachment
            attachment = nil
            if let abandoned { try leaveOut(.attachment, abandoned.id, abandoned.name, .unreadable, detail: reason) }
        case .excludedAttachment(let attachment):
            try leaveOut(.attachment, attachment.id, attachment.name, .excludedFromBackup)
        case .unreadable(let what, let id, let reason):
            let kind = BackupEntryKind(rawValue: what) ?? .note
            try leaveOut(kind, id, "\(what) \(id)", .unreadable, detail: reason)
        }
    }

    /// Writes the record of something left out, so a restore reports it too, and reports it.
    private mutating func leaveOut(
        _ kind: BackupEntryKind, _ id: String, keychain: String? = nil, _ description: String, _ reason: BackupReason, detail: String? = nil
    ) throws {
        let record = LeftOutRecord(kind: kind, id: id, keychain: keychain, description: description, reason: reason, detail: detail)
        try writer.write(.leftOut(record))
        add(record.entry)
    }

    private mutating func add(_ entry: BackupReportEntry) {
        builder.add(entry)
        progress.update(itemsDone: builder.handled)
    }
}

/// How a report names an item: its class and identifying attributes (never its secret).
enum ItemDescription {
    static func of(_ item: BackedUpItem) -> String {
        ([item.itemClass.rawValue] + item.attributes.identifying).joined(separator: " ")
    }
}
