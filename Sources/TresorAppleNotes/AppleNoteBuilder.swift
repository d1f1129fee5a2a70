import Foundation

/// Turns one note row (ZICCLOUDSYNCINGOBJECT) and its ZICNOTEDATA row into an ``AppleNote``,
/// or throws why it cannot: then the note is skipped, the others are read.
struct AppleNoteBuilder {
    let id: Int64
    let row: StoredRow
    let noteData: StoredRow?
    let accountColumns: [String]
    let accountIDs: Set<Int64>
    let folderAccounts: [Int64: Int64?]
    let limits: AppleNotesLimits
    let fetchNoteData: (StoredRow) throws(AppleNotesError) -> NoteData

    /// Dates further than this from 2001 (about 3,000 years) are damage, not dates.
    static let maxDateMagnitude: Double = 1e11

    func build() throws(AppleNotesError) -> AppleNote {
        let storedTitle = try row.text("ZTITLE1").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        let folderID = try row.integer("ZFOLDER").flatMap { folderAccounts[$0] != nil ? $0 : nil }
        var accountID: Int64?
        for column in accountColumns {
            if let candidate = try row.integer(column), accountIDs.contains(candidate) {
                accountID = candidate
                break
            }
        }
        if accountID == nil, let folderID { accountID = folderAccounts[folderID] ?? nil }
        let created = try date(NoteStoreSchema.creationDateColumns)
        let modified = try date(NoteStoreSchema.modificationDateColumns)

        let content: AppleNoteContent
        let title: String
        if try isLocked() {
            content = .locked(try lockedNote())
            title = storedTitle ?? "Locked note"
        } else {
            guard let noteData else { throw .invalidValue("the note has no \(NoteStoreSchema.noteDataTable) row") }
            let data = try fetchNoteData(noteData).data
            // Formatting kept as Tresor Markdown; the title from the plain text.
            content = .text(try AppleNoteBody.decodeMarkdown(data, limits: limits))
            let plain = try AppleNoteBody.decodeText(data, limits: limits)
            title = storedTitle ?? Self.title(fromText: plain)
        }
        return AppleNote(
            id: id, title: title, folderID: folderID, accountID: accountID, created: created, modified: modified,
            content: content, isPinned: (try row.integer("ZISPINNED") ?? 0) != 0)
    }

    /// `ZISPASSWORDPROTECTED` when the schema has it; else whether a wrapped key is stored.
    private func isLocked() throws(AppleNotesError) -> Bool {
        if row.has("ZISPASSWORDPROTECTED") {
            return (try row.integer("ZISPASSWORDPROTECTED") ?? 0) != 0
        }
        return row.isSet("ZCRYPTOWRAPPEDKEY")
    }

    /// The crypto fields, shapes checked. IV and tag come from the ZICNOTEDATA row (where
    /// Apple keeps the body's) and else from the note row (older versions).
    private func lockedNote() throws(AppleNotesError) -> AppleLockedNote {
        let table = NoteStoreSchema.objectTable
        guard let salt = try row.blob("ZCRYPTOSALT"), !salt.isEmpty else {
            throw .invalidValue("the locked note has no salt (\(table).ZCRYPTOSALT)")
        }
        guard salt.count <= 1024 else { throw .invalidValue("\(table).ZCRYPTOSALT is \(salt.count) bytes, more than 1024") }
        guard let rawIterations = try row.integer("ZCRYPTOITERATIONCOUNT") else {
            throw .invalidValue("the locked note has no iteration count (\(table).ZCRYPTOITERATIONCOUNT)")
        }
        guard rawIterations >= 1 else {
            throw .invalidValue("\(table).ZCRYPTOITERATIONCOUNT is \(rawIterations), it must be at least 1")
        }
        guard rawIterations <= limits.maxIterationCount else {
            throw .tooLarge("\(table).ZCRYPTOITERATIONCOUNT is \(rawIterations), more than \(limits.maxIterationCount)")
        }
        guard let wrappedKey = try row.blob("ZCRYPTOWRAPPEDKEY") else {
            throw .invalidValue("the locked note has no wrapped key (\(table).ZCRYPTOWRAPPEDKEY)")
        }
        guard wrappedKey.count == 24 else {
            throw .invalidValue("\(table).ZCRYPTOWRAPPEDKEY is \(wrappedKey.count) bytes, expected 24")
        }
        let hint = try row.text("ZPASSWORDHINT")
        guard let noteData else { throw .invalidValue("the locked note has no \(NoteStoreSchema.noteDataTable) row") }
        let loaded = try fetchNoteData(noteData)
        let iv = try cryptoField("ZCRYPTOINITIALIZATIONVECTOR", name: "IV", loaded.row)
        guard (12...128).contains(iv.count) else {
            throw .invalidValue("the locked note's IV is \(iv.count) bytes, expected 12 to 128 (Apple writes 16)")
        }
        let tag = try cryptoField("ZCRYPTOTAG", name: "tag", loaded.row)
        guard tag.count == 16 else { throw .invalidValue("the locked note's tag is \(tag.count) bytes, expected 16") }
        let ciphertext = loaded.data
        guard !ciphertext.isEmpty else { throw .invalidValue("the locked note's ciphertext is empty") }
        return AppleLockedNote(
            salt: salt, iterations: Int(rawIterations), wrappedKey: wrappedKey, iv: iv, tag: tag,
            ciphertext: ciphertext, hint: hint)
    }

    private func cryptoField(_ column: String, name: String, _ noteDataRow: StoredRow) throws(AppleNotesError) -> Data {
        if let value = try noteDataRow.blob(column) { return value }
        if let value = try row.blob(column) { return value }
        throw .invalidValue("the locked note has no \(name) (\(column) of \(NoteStoreSchema.noteDataTable) or \(NoteStoreSchema.objectTable))")
    }

    /// The first of `columns` present and non-null, as a date (seconds since 2001-01-01 UTC).
    private func date(_ columns: [String]) throws(AppleNotesError) -> Date? {
        for column in columns {
            guard let seconds = try row.number(column) else { continue }
            guard seconds.isFinite, abs(seconds) <= Self.maxDateMagnitude else {
                throw .invalidValue("\(NoteStoreSchema.objectTable).\(column) is not a plausible date")
            }
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        return nil
    }

    /// The first non-blank line, trimmed and at most 200 characters; "Untitled note" if none.
    /// (U+FFFC marks an attachment's place in Apple's text and counts as blank.)
    static func title(fromText text: String) -> String {
        let blank = CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\u{FFFC}"))
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: blank)
            if !trimmed.isEmpty { return String(trimmed.prefix(200)) }
        }
        return "Untitled note"
    }
}
