import Crypto
import Foundation
import TresorCrypto
import TresorNotesDomain

/// The keybag layer over all note content (docs/FORMAT.md, "Two layers", point 1): titles, bodies,
/// folder names, hints, a locked note's ciphertext and every attachment chunk are sealed under a
/// key derived from the account's protection class key (`afterFirstUnlock`), so a copied home
/// reveals no note text without the device key (and passcode).
struct ContentSealing: Sendable {
    static let formatVersion = "v1"

    let contentKey: SymmetricKey
    private let classKey: SymmetricKey

    init(classKey: SymmetricKey) {
        self.classKey = classKey
        contentKey = KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.notes.v1.content")
    }

    /// For import tags (blind index of imported notes, so a second import skips them). Derived
    /// when an import asks, not on every note operation.
    var indexKey: SymmetricKey {
        KeyDerivation.hkdfSHA256(inputKeyMaterial: classKey, salt: Data(), info: "tresor.notes.v1.index")
    }

    /// Binds a sealed value to its table, row and column, so it cannot be moved or swapped.
    static func associatedData(_ table: String, id: String, column: String) -> Data {
        Data("tresor.notes.\(formatVersion)/\(table)/\(id)/\(column)".utf8)
    }

    func seal(_ plaintext: some DataProtocol, table: String, id: String, column: String) throws -> Data {
        try Envelope.seal(plaintext, using: contentKey, authenticating: Self.associatedData(table, id: id, column: column))
    }

    /// ``seal(_:table:id:column:)`` as the envelope's header and body, unjoined (see
    /// ``Envelope/sealParts(_:using:authenticating:)``): for attachment chunks written to a file
    /// piece by piece.
    func sealParts(_ plaintext: some DataProtocol, table: String, id: String, column: String) throws -> (header: Data, body: Data) {
        try Envelope.sealParts(plaintext, using: contentKey, authenticating: Self.associatedData(table, id: id, column: column))
    }

    func open(_ sealed: Data, table: String, id: String, column: String) throws -> Data {
        do {
            return try Envelope.open(sealed, using: contentKey, authenticating: Self.associatedData(table, id: id, column: column))
        } catch {
            throw NotesError.damaged("the \(column) of \(table.dropLast()) \(id)")
        }
    }

    func sealText(_ text: String, table: String, id: String, column: String) throws -> Data {
        try seal(Data(text.utf8), table: table, id: id, column: column)
    }

    func openText(_ sealed: Data, table: String, id: String, column: String) throws -> String {
        guard let text = String(data: try open(sealed, table: table, id: id, column: column), encoding: .utf8) else {
            throw NotesError.damaged("the \(column) of \(table.dropLast()) \(id)")
        }
        return text
    }

    /// The layer of one note's title and body: a shared note's own record key, held by the
    /// server (docs/FORMAT.md, "Web accounts and shared notes"), else the content key itself.
    func noteLayer(_ row: NoteRow) throws -> ContentSealing {
        guard let sealedKey = row.sealedRecordKey else { return self }
        return ContentSealing(classKey: SymmetricKey(data: try open(sealedKey, table: "notes", id: row.id, column: "record_key")))
    }

    func importTag(_ material: Data) -> Data {
        MessageAuthentication.hmacSHA256(Data("import\0".utf8) + material, key: indexKey)
    }
}
