import Foundation
import GRDB
import Testing
import TresorKeybag

@testable import TresorKeychain

/// Encryption at rest (docs/SECURITY.md §3.6, §3.7): nothing but counts, classes and sizes readable
/// from the files; deletes leave no ciphertext behind; tampering is detected per item.
@Suite struct KeychainAtRestTests {
    /// Unique markers for every attribute of every class.
    struct Markers {
        let run = UUID().uuidString
        var all: [String] = []

        mutating func make(_ name: String) -> String {
            let marker = "MARKER-\(name)-\(run)"
            all.append(marker)
            return marker
        }
    }

    @Test func noAttributeNorSecretIsReadableFromTheFiles() throws {
        let home = try KeychainHome()
        var markers = Markers()
        let group = markers.make("GROUP")
        let caller = Caller(accessGroups: [group], defaultAccessGroup: group)
        var numbers: [String] = []
        var blobs: [Data] = []
        var ids: [(ItemClass, String)] = []

        func common(_ attributes: inout ItemAttributes, _ prefix: String) {
            attributes.label = markers.make("\(prefix)-LABEL")
            attributes.description = markers.make("\(prefix)-DESCRIPTION")
            attributes.comment = markers.make("\(prefix)-COMMENT")
            let creator = UInt32.random(in: 1_000_000_000...4_000_000_000)
            let type = UInt32.random(in: 1_000_000_000...4_000_000_000)
            attributes.creator = creator
            attributes.type = type
            numbers += [String(creator), String(type)]
            attributes.custom = [
                markers.make("\(prefix)-CUSTOM-KEY-1"): markers.make("\(prefix)-CUSTOM-VALUE-1"),
                markers.make("\(prefix)-CUSTOM-KEY-2"): markers.make("\(prefix)-CUSTOM-VALUE-2"),
            ]
        }

        for accessible in [ProtectionClass.whenUnlocked, .always, .afterFirstUnlockThisDeviceOnly] {
            var generic = ItemAttributes()
            common(&generic, "GENP-\(accessible.rawValue)")
            generic.accessible = accessible
            generic.service = markers.make("GENP-SERVICE-\(accessible.rawValue)")
            generic.account = markers.make("GENP-ACCOUNT-\(accessible.rawValue)")
            let genericData = Data(markers.make("GENP-GENERIC-\(accessible.rawValue)").utf8)
            generic.generic = genericData
            blobs.append(genericData)
            let item = try home.keychain.add(
                .genericPassword, attributes: generic, secret: Data(markers.make("GENP-SECRET-\(accessible.rawValue)").utf8), caller: caller)
            ids.append((.genericPassword, item.id))
        }

        var internet = ItemAttributes()
        common(&internet, "INET")
        internet.server = markers.make("INET-SERVER")
        internet.protocol = markers.make("INET-PROTOCOL")
        internet.port = 54321
        internet.path = markers.make("INET-PATH")
        internet.account = markers.make("INET-ACCOUNT")
        internet.authenticationType = markers.make("INET-AUTHTYPE")
        internet.securityDomain = markers.make("INET-SECDOMAIN")
        internet.synchronizable = true
        ids.append(
            (
                .internetPassword,
                try home.keychain.add(.internetPassword, attributes: internet, secret: Data(markers.make("INET-SECRET").utf8), caller: caller).id
            ))

        var key = ItemAttributes()
        common(&key, "KEYS")
        key.keyClass = .private
        let applicationLabel = Data(markers.make("KEYS-APPLABEL").utf8)
        let applicationTag = Data(markers.make("KEYS-APPTAG").utf8)
        key.applicationLabel = applicationLabel
        key.applicationTag = applicationTag
        blobs += [applicationLabel, applicationTag]
        key.keyType = markers.make("KEYS-KEYTYPE")
        key.keySizeInBits = 3072
        ids.append((.key, try home.keychain.add(.key, attributes: key, secret: Data(markers.make("KEYS-SECRET").utf8), caller: caller).id))

        // A certificate, if the certificate work accepts it: neither its DER nor the names in it
        // may be readable.
        let der = try certificateDER("ISRG_Root_X1")
        var certificateNeedles: [Data] = []
        if certificateFillAccepts(der) {
            var certificate = ItemAttributes()
            common(&certificate, "CERT")
            ids.append((.certificate, try home.keychain.add(.certificate, attributes: certificate, secret: der, caller: caller).id))
            certificateNeedles = [Data("Internet Security Research Group".utf8), Data("ISRG Root X1".utf8)] + windows(of: der)
        }

        // A big secret (overflow pages) and an updated one (old and new value).
        try home.keychain.update(
            ItemQuery(.genericPassword, id: ids[0].1),
            changes: {
                var c = ItemAttributes(); c.label = markers.make("UPDATED-LABEL"); return c
            }(),
            secret: Data(markers.make("UPDATED-SECRET").utf8), caller: caller)
        home.keychain.completePendingCheckpoint()
        // (added after the update's checkpoint emptied the WAL, so the WAL has content)
        let bigSecret = Data((markers.make("BIG-SECRET") + String(repeating: "-padding", count: 3000)).utf8)
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: markers.make("BIG-SERVICE"), account: "x"), secret: bigSecret, caller: caller)

        // Dates: the item dates, as the JSON would write them (seconds since 1970).
        let items = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: caller)
        let dates = items.compactMap { $0.attributes?.creationDate } + items.compactMap { $0.attributes?.modificationDate }
        #expect(!dates.isEmpty)

        func expectNothingReadable(_ stage: String) {
            for marker in markers.all {
                #expect(home.files(containing: marker).isEmpty, "\(stage): \(marker) is readable in \(home.files(containing: marker))")
                // Also not as the base64 that JSON uses for Data attributes.
                let base64 = Data(marker.utf8).base64EncodedString()
                #expect(home.files(containing: String(base64.prefix(24))).isEmpty, "\(stage): base64 of \(marker)")
            }
            for blob in blobs {
                #expect(home.files(containing: blob.base64EncodedString()).isEmpty, "\(stage)")
            }
            for needle in certificateNeedles {
                #expect(home.files(containing: needle).isEmpty, "\(stage): certificate bytes readable")
            }
            for window in windows(of: bigSecret) {
                #expect(home.files(containing: window).isEmpty, "\(stage): big secret readable")
            }
            for number in numbers {
                #expect(home.files(containing: number, onlyKeychainFiles: true).isEmpty, "\(stage): creator/type \(number) readable")
            }
            for date in dates {
                let seconds = String(Int(date.timeIntervalSince1970))
                #expect(home.files(containing: seconds, onlyKeychainFiles: true).isEmpty, "\(stage): a date (\(seconds)) is readable")
            }
            // The run id alone (in every marker) must not show either.
            #expect(home.files(containing: markers.run).isEmpty, "\(stage)")
            // Sanity: the search does find what is stored (a row's secret ciphertext).
            if let stored = try? home.rawRow(.internetPassword, id: ids.first { $0.0 == .internetPassword }!.1) {
                #expect(!home.files(containing: stored.secret).isEmpty, "\(stage): the byte search finds stored ciphertext")
            } else {
                Issue.record("\(stage): the internet password row is missing")
            }
        }

        // With the WAL full of the inserts and updates.
        let walBytes =
            (try? Data(contentsOf: home.keychainFile.deletingLastPathComponent().appendingPathComponent("login.keychain.db-wal")).count) ?? 0
        #expect(walBytes > 0, "the inserts are in the WAL")
        expectNothingReadable("before restart")

        // After a restart (the WAL checkpointed on close) and reads.
        try home.restart()
        try home.unlock()
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: caller).count == 4)
        let files = home.allFiles().map(\.lastPathComponent)
        #expect(files.contains("login.keychain.db"))
        #expect(files.contains("login.keychain.db-wal"), "the WAL exists while the keychain is open: \(files)")
        #expect(files.contains("login.keychain.db-shm"), "\(files)")
        expectNothingReadable("after restart")
    }

    /// How the store is opened (TresorStorage.SealedDatabase): every connection overwrites
    /// deleted rows; only the one writer gets the larger page cache, so readers cannot grow
    /// the daemon's memory with it.
    @Test func everyConnectionOverwritesDeletedRowsAndOnlyTheWriterHasALargeCache() throws {
        let home = try KeychainHome()
        let pool = home.keychain.database
        let (writerSecureDelete, writerCache) = try pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA secure_delete"), try Int.fetchOne(db, sql: "PRAGMA cache_size"))
        }
        let (readerSecureDelete, readerCache) = try pool.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA secure_delete"), try Int.fetchOne(db, sql: "PRAGMA cache_size"))
        }
        // The keychain's own connection for blind-index lookups is set up as the pool's readers.
        let (lookupSecureDelete, lookupCache) = try home.keychain.lookupReader.inDatabase { db in
            (try Int.fetchOne(db, sql: "PRAGMA secure_delete"), try Int.fetchOne(db, sql: "PRAGMA cache_size"))
        }
        #expect(writerSecureDelete == 1 && readerSecureDelete == 1 && lookupSecureDelete == 1)
        #expect(writerCache == -16384)
        #expect(readerCache == -2000 && lookupCache == -2000)  // SQLite's default
    }

    @Test func deletedItemsLeaveNoCiphertextBehind() throws {
        let home = try KeychainHome()
        let caller = Callers.appA
        let small = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "small", account: "a"), secret: secret("small secret"), caller: caller)
        let bigSecret = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let big = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "big", account: "a"), secret: bigSecret, caller: caller)
        let kept = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "kept", account: "a"), secret: secret("kept secret"), caller: caller)

        let smallRow = try home.rawRow(.genericPassword, id: small.id)
        let bigRow = try home.rawRow(.genericPassword, id: big.id)
        let keptRow = try home.rawRow(.genericPassword, id: kept.id)
        // Sanity: the stored ciphertexts are in the files before the delete (else the search proves nothing).
        #expect(!home.files(containing: smallRow.secret).isEmpty)
        #expect(!home.files(containing: keptRow.secret).isEmpty)

        #expect(try home.keychain.delete(ItemQuery(.genericPassword, id: small.id), caller: caller) == 1)
        #expect(try home.keychain.delete(genericQuery(service: "big"), caller: caller) == 1)
        home.waitForCheckpoint()

        for (name, row) in [("small", smallRow), ("big", bigRow)] {
            for window in windows(of: row.secret) {
                #expect(home.files(containing: window).isEmpty, "\(name): secret ciphertext left in \(home.files(containing: window))")
            }
            for window in windows(of: row.metadata) {
                #expect(home.files(containing: window).isEmpty, "\(name): metadata ciphertext left in \(home.files(containing: window))")
            }
            #expect(home.files(containing: row.rowKey).isEmpty, "\(name): wrapped row key left behind")
        }
        // The kept item is untouched.
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: kept.id, returnData: true), caller: caller).first?.secret
                == secret("kept secret"))
    }

    @Test func replacedSecretsLeaveNoOldCiphertextBehind() throws {
        let home = try KeychainHome()
        let item = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("first value"), caller: Callers.appA)
        let before = try home.rawRow(.genericPassword, id: item.id)
        try home.keychain.update(
            ItemQuery(.genericPassword, id: item.id), changes: ItemAttributes(), secret: secret("second value"), caller: Callers.appA)
        home.waitForCheckpoint()
        let after = try home.rawRow(.genericPassword, id: item.id)
        #expect(after.secret != before.secret)
        #expect(home.files(containing: before.secret).isEmpty, "old secret ciphertext left in \(home.files(containing: before.secret))")
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: item.id, returnData: true), caller: Callers.appA).first?.secret
                == secret("second value"))
    }

    @Test func movingAnItemToAStricterClassLeavesNoOldWrappingBehind() throws {
        // An `always` row key is wrapped under a key the device key alone opens. Once the item
        // is moved to whenUnlocked, that old wrapping (and the old metadata) must be gone.
        let home = try KeychainHome()
        let item = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a", accessible: .always), secret: secret("v"), caller: Callers.appA)
        let before = try home.rawRow(.genericPassword, id: item.id)
        var changes = ItemAttributes()
        changes.accessible = .whenUnlocked
        try home.keychain.update(ItemQuery(.genericPassword, id: item.id), changes: changes, secret: nil, caller: Callers.appA)
        home.waitForCheckpoint()
        let after = try home.rawRow(.genericPassword, id: item.id)
        #expect(after.pdmn == ProtectionClass.whenUnlocked.rawValue)
        #expect(after.rowKey != before.rowKey)
        #expect(home.files(containing: before.rowKey).isEmpty, "old always-wrapped row key left in \(home.files(containing: before.rowKey))")
        for window in windows(of: before.metadata) {
            #expect(home.files(containing: window).isEmpty, "old always-sealed metadata left in \(home.files(containing: window))")
        }
        try home.restart()
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: item.id, returnData: true), caller: Callers.appA)
        }
    }

    @Test func changedAttributesLeaveNoOldCiphertextBehind() throws {
        // Stricter reading of docs/SECURITY.md §3.7 ("deleted or replaced data lingers": no old
        // plaintext or ciphertext may stay behind):
        // an update replaces the sealed attributes, and the old version must not linger in the WAL.
        let home = try KeychainHome()
        var attributes = genericPassword(service: "s", account: "a")
        attributes.label = "a label the user wants gone"
        let item = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("v"), caller: Callers.appA)
        let before = try home.rawRow(.genericPassword, id: item.id)
        var changes = ItemAttributes()
        changes.label = "harmless"
        try home.keychain.update(ItemQuery(.genericPassword, id: item.id), changes: changes, secret: nil, caller: Callers.appA)
        home.waitForCheckpoint()
        let after = try home.rawRow(.genericPassword, id: item.id)
        #expect(after.metadata != before.metadata)
        for window in windows(of: before.metadata) {
            #expect(home.files(containing: window).isEmpty, "old metadata ciphertext left in \(home.files(containing: window))")
        }
    }

    @Test func purgedItemsLeaveNoCiphertextBehind() throws {
        let home = try KeychainHome()
        let item = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a", accessible: .whenPasscodeSetThisDeviceOnly),
            secret: secret("passcode-bound"), caller: Callers.appA)
        let row = try home.rawRow(.genericPassword, id: item.id)
        try home.keybag.removePasscode(current: try #require(home.passcode))
        #expect(try home.keychain.purge(.whenPasscodeSetThisDeviceOnly) == 1)
        home.waitForCheckpoint()
        #expect(home.files(containing: row.secret).isEmpty)
        #expect(home.files(containing: row.metadata).isEmpty)
    }

    // MARK: Tampering

    /// Three generic passwords and their ids.
    func homeWithThreeItems() throws -> (KeychainHome, [String]) {
        let home = try KeychainHome()
        var ids: [String] = []
        for name in ["one", "two", "three"] {
            var attributes = genericPassword(service: name, account: "a")
            attributes.label = "label-\(name)"
            ids.append(try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("secret-\(name)"), caller: Callers.appA).id)
        }
        return (home, ids)
    }

    func flipped(_ data: Data, at offset: Int) -> Data {
        var bytes = [UInt8](data)
        bytes[offset] ^= 0x01
        return Data(bytes)
    }

    @Test(arguments: [0, 5, 20, -1])
    func flippedSecretByteIsDetected(offset: Int) throws {
        let (home, ids) = try homeWithThreeItems()
        let row = try home.rawRow(.genericPassword, id: ids[1])
        try home.setColumn(.genericPassword, id: ids[1], column: "secret", to: flipped(row.secret, at: offset >= 0 ? offset : row.secret.count - 1))
        expectKeychainError(.decode, "by id") {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[1], returnData: true), caller: Callers.appA)
        }
        expectKeychainError(.decode, "by primary key") {
            try home.keychain.copyMatching(genericQuery(service: "two", account: "a", returnData: true), caller: Callers.appA)
        }
        // Its attributes are intact.
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[1]), caller: Callers.appA).first?.attributes?.label == "label-two")
        // The others still read.
        for (index, name) in [(0, "one"), (2, "three")] {
            #expect(
                try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[index], returnData: true), caller: Callers.appA).first?.secret
                    == secret("secret-\(name)"))
            #expect(
                try home.keychain.copyMatching(genericQuery(service: name, returnData: true), caller: Callers.appA).first?.secret
                    == secret("secret-\(name)"))
        }
    }

    @Test func flippedWrappedRowKeyIsDetected() throws {
        let (home, ids) = try homeWithThreeItems()
        let row = try home.rawRow(.genericPassword, id: ids[0])
        try home.setColumn(.genericPassword, id: ids[0], column: "row_key", to: flipped(row.rowKey, at: 3))
        expectKeychainError(.decode) {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[0], returnData: true), caller: Callers.appA)
        }
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[2], returnData: true), caller: Callers.appA).first?.secret
                == secret("secret-three"))
    }

    @Test(arguments: [0, 10, -1])
    func flippedMetadataByteIsReportedDamaged(offset: Int) throws {
        let (home, ids) = try homeWithThreeItems()
        let row = try home.rawRow(.genericPassword, id: ids[1])
        try home.setColumn(
            .genericPassword, id: ids[1], column: "metadata", to: flipped(row.metadata, at: offset >= 0 ? offset : row.metadata.count - 1))
        expectKeychainError(.decode, "attributes by id") {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[1]), caller: Callers.appA)
        }
        expectKeychainError(.decode, "data by id") {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[1], returnData: true), caller: Callers.appA)
        }
        // The others still read, by id, by primary key and by scan; a listing skips the damaged one.
        for (index, name) in [(0, "one"), (2, "three")] {
            #expect(
                try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[index], returnData: true), caller: Callers.appA).first?.secret
                    == secret("secret-\(name)"))
            #expect(
                try home.keychain.copyMatching(genericQuery(service: name, account: "a", returnData: true), caller: Callers.appA).first?.secret
                    == secret("secret-\(name)"))
            var byLabel = ItemQuery(.genericPassword, returnData: true)
            byLabel.attributes.label = "label-\(name)"
            #expect(try home.keychain.copyMatching(byLabel, caller: Callers.appA).first?.secret == secret("secret-\(name)"))
        }
        let listed = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.appA)
        #expect(Set(listed.map(\.id)) == [ids[0], ids[2]])
        // New items can still be added next to it.
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "four", account: "a"), secret: secret("secret-four"), caller: Callers.appA)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "four", returnData: true), caller: Callers.appA).first?.secret
                == secret("secret-four"))
    }

    @Test func swappedSecretsAreBothDetected() throws {
        let (home, ids) = try homeWithThreeItems()
        let first = try home.rawRow(.genericPassword, id: ids[0])
        let second = try home.rawRow(.genericPassword, id: ids[1])
        try home.setColumn(.genericPassword, id: ids[0], column: "secret", to: second.secret)
        try home.setColumn(.genericPassword, id: ids[1], column: "secret", to: first.secret)
        for id in ids[0...1] {
            expectKeychainError(.decode) {
                try home.keychain.copyMatching(ItemQuery(.genericPassword, id: id, returnData: true), caller: Callers.appA)
            }
        }
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: ids[2], returnData: true), caller: Callers.appA).first?.secret
                == secret("secret-three"))
    }

    @Test func swappedSecretsAndRowKeysAreBothDetected() throws {
        // Moving a secret together with its wrapped row key to another row is still detected:
        // the ciphertext is bound to its row id.
        let (home, ids) = try homeWithThreeItems()
        let first = try home.rawRow(.genericPassword, id: ids[0])
        let second = try home.rawRow(.genericPassword, id: ids[1])
        for (id, row) in [(ids[0], second), (ids[1], first)] {
            try home.setColumn(.genericPassword, id: id, column: "secret", to: row.secret)
            try home.setColumn(.genericPassword, id: id, column: "row_key", to: row.rowKey)
        }
        for id in ids[0...1] {
            expectKeychainError(.decode) {
                try home.keychain.copyMatching(ItemQuery(.genericPassword, id: id, returnData: true), caller: Callers.appA)
            }
        }
    }

    @Test func swappedMetadataIsDetected() throws {
        let (home, ids) = try homeWithThreeItems()
        let first = try home.rawRow(.genericPassword, id: ids[0])
        let second = try home.rawRow(.genericPassword, id: ids[1])
        try home.setColumn(.genericPassword, id: ids[0], column: "metadata", to: second.metadata)
        try home.setColumn(.genericPassword, id: ids[1], column: "metadata", to: first.metadata)
        for id in ids[0...1] {
            expectKeychainError(.decode) { try home.keychain.copyMatching(ItemQuery(.genericPassword, id: id), caller: Callers.appA) }
        }
        // Neither shows up under the other's attributes: the label's blind index points at
        // the row that had it, which is reported damaged, not returned.
        expectKeychainError(.decode) {
            var byLabel = ItemQuery(.genericPassword, limit: .all)
            byLabel.attributes.label = "label-one"
            return try home.keychain.copyMatching(byLabel, caller: Callers.appA)
        }
    }

    @Test func damagedMetadataKeyAffectsOnlyItsClass() throws {
        let home = try KeychainHome()
        let generic = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("generic"), caller: Callers.appA)
        let always = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "t", account: "a", accessible: .always), secret: secret("always"),
            caller: Callers.appA)
        let key = try home.keychain.add(.key, attributes: KeychainItemTests.key(), secret: secret("key"), caller: Callers.appA)
        try home.keychain.database.write { db in
            let wrapped = try #require(
                try Data.fetchOne(db, sql: "SELECT wrapped_key FROM metadata_keys WHERE item_class = 'genp' AND pdmn = 'whenUnlocked'"))
            var bytes = [UInt8](wrapped)
            bytes[10] ^= 0x80
            try db.execute(
                sql: "UPDATE metadata_keys SET wrapped_key = ? WHERE item_class = 'genp' AND pdmn = 'whenUnlocked'", arguments: [Data(bytes)])
        }
        try home.reopenKeychain()  // nothing cached
        expectKeychainError(.decode) {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: generic.id, returnData: true), caller: Callers.appA)
        }
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: always.id, returnData: true), caller: Callers.appA).first?.secret
                == secret("always"))
        #expect(try home.keychain.copyMatching(ItemQuery(.key, id: key.id, returnData: true), caller: Callers.appA).first?.secret == secret("key"))
    }

    @Test func secretMovedIntoAnotherClassTableIsDetected() throws {
        let home = try KeychainHome()
        let generic = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("generic"), caller: Callers.appA)
        let key = try home.keychain.add(.key, attributes: KeychainItemTests.key(), secret: secret("key"), caller: Callers.appA)
        let genericRow = try home.rawRow(.genericPassword, id: generic.id)
        // Same row key and secret in the other table, at the same id: the table is bound too.
        try home.keychain.database.write { db in
            try db.execute(sql: "DELETE FROM keys WHERE id = ?", arguments: [Int64(key.id)!])
            try db.execute(
                sql:
                    "INSERT INTO keys (id, pdmn, primary_key_tag, group_tag, metadata, row_key, secret) SELECT id, pdmn, X'00', group_tag, metadata, row_key, secret FROM genp WHERE id = ?",
                arguments: [genericRow.id])
        }
        do {
            let found = try home.keychain.copyMatching(ItemQuery(.key, id: generic.id, returnData: true), caller: Callers.appA)
            Issue.record("a row copied into another class's table opened: \(found.map(\.secret))")
        } catch {
            #expect((error as? KeychainError)?.kind == .decode)
        }
    }
}
