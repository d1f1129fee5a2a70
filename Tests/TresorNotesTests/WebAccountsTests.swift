import Foundation
import GRDB
import Testing
import TresorCrypto
import TresorNotesDomain

@testable import TresorNotes

/// Web accounts, passwords stored only as salted slow hashes (docs/WEB.md, "Accounts and
/// sessions").
@Suite("Web accounts")
struct WebAccountsTests {
    @Test func aRegisteredAccountSignsInWithItsPasswordOnly() throws {
        let home = try NotesHome()
        let ann = try home.notes.registerAccount(name: "Ann", password: AccountPassword("ann's password"))
        #expect(ann.name == "ann" && !ann.isLocal)
        #expect(try home.notes.authenticate(name: "ANN", password: AccountPassword("ann's password"))?.id == ann.id)
        #expect(try home.notes.authenticate(name: "ann", password: AccountPassword("ann's passwort")) == nil)
        #expect(try home.notes.authenticate(name: "bob", password: AccountPassword("ann's password")) == nil)
        // The local account never signs in through a stored password (its password is the passcode).
        #expect(try home.notes.authenticate(name: "local", password: AccountPassword("ann's password")) == nil)
        #expect(try home.notes.checkPassword(AccountPassword("ann's password"), account: ann.id))
        #expect(try !home.notes.checkPassword(AccountPassword("ann's password"), account: .local))
        #expect(try home.notes.webAccount(named: "local")?.id == .local)
        #expect(try home.notes.webAccount(named: "ann") == ann)
    }

    @Test func namesAreCheckedAndUnique() throws {
        let home = try NotesHome()
        _ = try home.notes.registerAccount(name: "ann", password: AccountPassword("password 1"))
        #expect(throws: NotesError.nameTaken("ann")) { try home.notes.registerAccount(name: "Ann", password: AccountPassword("password 2")) }
        #expect(throws: NotesError.nameTaken("local")) { try home.notes.registerAccount(name: "local", password: AccountPassword("password 2")) }
        for bad in ["", "a b", "ann/..", "<script>", String(repeating: "a", count: 33), "é"] {
            #expect(throws: NotesError.self) { try home.notes.registerAccount(name: bad, password: AccountPassword("password 2")) }
        }
        #expect(throws: NotesError.self) { try AccountPassword("short") }
        #expect(throws: NotesError.self) { try AccountPassword(String(repeating: "x", count: 1025)) }
    }

    @Test func passwordsAreStoredOnlyAsPerAccountSaltedHashes() throws {
        let home = try NotesHome()
        let password = unique("same password")
        _ = try home.notes.registerAccount(name: "ann", password: AccountPassword(password))
        _ = try home.notes.registerAccount(name: "bob", password: AccountPassword(password))
        #expect(home.files(containing: password).isEmpty)
        let rows = try home.notes.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT password_salt, password_iterations, password_hash FROM accounts WHERE login_name IS NOT NULL")
        }
        #expect(rows.count == 2)
        #expect(rows[0]["password_salt"] as Data != rows[1]["password_salt"] as Data)
        #expect(rows[0]["password_hash"] as Data != rows[1]["password_hash"] as Data)
        #expect((rows[0]["password_salt"] as Data).count == 16 && (rows[0]["password_hash"] as Data).count == 32)
        #expect(rows.allSatisfy { $0["password_iterations"] as Int == home.settings.kdfRounds })
        // The stored hash is PBKDF2-HMAC-SHA256 of the password with that salt and count.
        let expected = try PBKDF2.deriveKey(
            from: Array(password.utf8),
            parameters: PBKDF2Parameters(
                salt: rows[0]["password_salt"], rounds: rows[0]["password_iterations"], outputByteCount: 32))
        #expect(expected.withUnsafeBytes { Data($0) } == rows[0]["password_hash"] as Data)
    }

    @Test func productionSettingsHashWithAtLeast600000Rounds() {
        #expect(NotesSettings.production.kdfRounds >= 600_000)
    }
}
