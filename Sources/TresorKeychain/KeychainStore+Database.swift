import Crypto
import Foundation
import GRDB
import Synchronization
import TresorCrypto
import TresorKeybag
import TresorStorage
import TresorSystem

// Reads and writes, with SQLite's failures as the keychain's errors.
extension KeychainStore {
    /// Reads, with SQLite's failures (a damaged page, a full disk) as a clear storage error.
    /// Every read here is one statement, atomic by itself: no transaction is opened around it
    /// (a BEGIN and a COMMIT would double a lookup's SQLite work).
    /// `onLookupConnection`: on ``lookupReader`` rather than one of the pool's readers.
    /// `inTransaction`: in one read transaction, for many reads in a row (a restore's batch).
    func read<T>(onLookupConnection: Bool = false, inTransaction: Bool = false, _ body: (Database) throws -> T) throws -> T {
        do {
            if inTransaction { return try database.read(body) }
            return try onLookupConnection ? lookupReader.inDatabase(body) : database.unsafeRead(body)
        } catch let error as DatabaseError {
            throw Self.readError(error)
        }
    }

    /// A failed read in keychain terms: a damaged file, or storage that cannot be read.
    static func readError(_ error: DatabaseError) -> KeychainError {
        if [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return .decode("the keychain database is damaged (SQLite error \(error.resultCode.rawValue)); the file was left as it is")
        }
        return .storage(DatabaseFailure(error, database: "keychain", access: .read).description)
    }

    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.write(body)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw KeychainError.duplicateItem
        } catch let error as DatabaseError {
            // A full or read-only disk in the words every store uses; the transaction rolled back.
            if let refusal = error.storageRefusal { throw refusal }
            throw KeychainError.storage(DatabaseFailure(error, database: "keychain", access: .write).description)
        }
    }

    /// Keybag refusals in keychain terms.
    public static func mapKeybag<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeybagError {
            switch error {
            case .classUnavailable, .classKeyAbsent:
                throw KeychainError.interactionNotAllowed(error.description)
            case .throttled(_, let wait):
                throw KeychainError.throttled(error.description, retryAfterSeconds: wait)
            case .wrongPasscode(_, let wait):
                throw KeychainError.authFailed(error.description, retryAfterSeconds: wait)
            case .passcodeRequired, .noPasscodeSet, .invalidPasscode:
                throw KeychainError.authFailed(error.description)
            default:
                throw KeychainError.storage(error.description)
            }
        }
    }
}
