import Foundation
import GRDB
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The real daemon takes an updated row's old ciphertext out of `login.keychain.db-wal` before it
/// answers `lock` — not only within the second the background checkpoint has (docs/SECURITY.md
/// §3.7, "deleted or replaced data lingers").
@Suite(.blocksItsThread, .serialized) struct KeychainWALLockTests {
    /// Every row's sealed attributes and secret in the home's login keychain, read on a
    /// connection closed before returning (an open one would be a reader the checkpoint waits for).
    static func sealedColumns(_ harness: Harness) throws -> [Data] {
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: harness.paths.loginKeychain.path, configuration: configuration)
        defer { try? database.close() }
        return try database.read { db in
            try Row.fetchAll(db, sql: "SELECT metadata, secret FROM genp").flatMap { row -> [Data] in [row["metadata"], row["secret"]] }
        }
    }

    static func walBytes(_ harness: Harness) -> Data {
        (try? Data(contentsOf: URL(fileURLWithPath: harness.paths.loginKeychain.path + "-wal"))) ?? Data()
    }

    @Test func anUpdatesOldCiphertextIsOutOfTheWALWhenTheLockIsAnswered() throws {
        let harness = try Harness()
        harness.secrets = [SecretRouteTests.passcode, "wal-old-secret", "wal-new-secret"]
        let keychain = try SecretRouteTests.startAsRegisteredApplication(harness)
        let item = ItemQuery.genericPassword(service: "wal.example", account: "ada")
        try keychain.add(item, secret: Data("wal-old-secret".utf8)) { $0.label = "wal-marker-\(UUID().uuidString.prefix(8))" }
        let before = try Self.sealedColumns(harness)
        #expect(!before.isEmpty)
        let inWAL = Self.walBytes(harness)
        #expect(before.allSatisfy { inWAL.firstRange(of: $0) != nil }, "the add's row is in the WAL")

        var changes = ItemAttributes()
        changes.label = "renamed"
        #expect(try keychain.update(item, secret: Data("wal-new-secret".utf8), changes: changes) == 1)
        _ = try keychain.client.lock()
        let after = Self.walBytes(harness)
        let old = Set(before).subtracting(try Self.sealedColumns(harness))
        #expect(old.count == 2, "the update replaced the sealed attributes and the secret")
        for bytes in old {
            #expect(after.firstRange(of: bytes) == nil, "the old row's ciphertext is in the WAL after the lock was answered")
        }
        try harness.expectNoSecretLeaked()
    }
}
