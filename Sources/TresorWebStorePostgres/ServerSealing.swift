import Crypto
import Foundation
import TresorCrypto
import TresorNotesDomain

/// How the server seals what it keeps (docs/FORMAT.md, "A Tresor server's database"): every
/// value is an `Envelope` whose associated data names its table, row and column, so a sealed
/// value cannot be moved to another row or column. Everything is sealed under the content key
/// (from the server key); it opens the database's key check at start.
struct ServerSealing: Sendable {
    let key: SymmetricKey

    init(_ key: SymmetricKey) {
        self.key = key
    }

    /// The content layer of a server key.
    init(serverKey: ServerKey) {
        key = serverKey.contentKey
    }

    static func associatedData(_ table: String, _ id: String, _ column: String) -> Data {
        Data("tresor.server.v1/\(table)/\(id)/\(column)".utf8)
    }

    func seal(_ plaintext: some DataProtocol, _ table: String, _ id: String, _ column: String) throws -> Data {
        try Envelope.seal(plaintext, using: key, authenticating: Self.associatedData(table, id, column))
    }

    func sealText(_ text: String, _ table: String, _ id: String, _ column: String) throws -> Data {
        try seal(Data(text.utf8), table, id, column)
    }

    func open(_ sealed: Data, _ table: String, _ id: String, _ column: String) throws -> Data {
        do {
            return try Envelope.open(sealed, using: key, authenticating: Self.associatedData(table, id, column))
        } catch {
            throw NotesError.damaged("the \(column) of \(table.dropLast()) \(id)")
        }
    }

    func openText(_ sealed: Data, _ table: String, _ id: String, _ column: String) throws -> String {
        guard let text = String(data: try open(sealed, table, id, column), encoding: .utf8) else {
            throw NotesError.damaged("the \(column) of \(table.dropLast()) \(id)")
        }
        return text
    }

    /// What the key check row holds (sealed): opening it proves the key is the database's.
    static let keyCheckText = "tresor server key check"
}
