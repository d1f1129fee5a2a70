import Foundation
import GRDB
import Testing
import TresorKeybag

@testable import TresorKeychain

/// The searchable attribute index (schema v6): a search by a label, an account, a service — any
/// attribute the table marks searchable — opens the rows holding its value, not every row of
/// the caller's groups.
@Suite struct KeychainAttributeIndexTests {
    /// How many rows' attributes `body` opened.
    func opened(_ home: KeychainHome, _ body: () throws -> Void) rethrows -> Int {
        let before = home.keychain.metadataOpenCount.load(ordering: .relaxed)
        try body()
        return home.keychain.metadataOpenCount.load(ordering: .relaxed) - before
    }

    /// The ids `attributes` finds, answered from an index only (nil would be a scan).
    func found(
        _ home: KeychainHome, _ itemClass: ItemClass, _ attributes: ItemAttributes, caller: Caller = Callers.appA
    ) throws -> Set<String> {
        do {
            let items = try #require(
                try home.keychain.copyMatchingFromIndex(ItemQuery(itemClass, attributes: attributes, limit: .all), caller: caller))
            return Set(items.map(\.id))
        } catch KeychainError.itemNotFound {
            return []
        }
    }

    func isIndexed(_ home: KeychainHome, _ id: String) throws -> Bool {
        try home.keychain.database.read { db in
            try Int.fetchOne(db, sql: "SELECT custom_indexed FROM genp WHERE id = ?", arguments: [Int64(id)!]) != nil
        }
    }

    /// Makes rows look as a v5 database's do after the v6 migration: marker NULL (their
    /// searchable attributes without tags).
    func forgetIndex(_ home: KeychainHome, _ ids: [String]) throws {
        try home.keychain.database.write { db in
            for id in ids {
                try db.execute(sql: "DELETE FROM custom_attribute_tags WHERE item_class = 'genp' AND item_id = ?", arguments: [Int64(id)!])
                try db.execute(sql: "UPDATE genp SET custom_indexed = NULL WHERE id = ?", arguments: [Int64(id)!])
            }
        }
    }

    /// Which attributes are searchable is the table's to say, once per attribute; the ones
    /// left out are indexed otherwise, stored in the clear, set by the keychain, or booleans.
    @Test func theTableDeclaresWhichAttributesAreSearchable() {
        let searchable = Set(ItemAttribute.searchable.map(\.name))
        for name in ["label", "description", "comment", "creator", "type", "account", "service", "generic", "server", "port", "applicationTag"] {
            #expect(searchable.contains(name), "\(name)")
        }
        for name in [
            "accessGroup", "accessible", "accessControl", "synchronizable", "custom", "creationDate", "modificationDate", "readableByScripts",
        ] {
            #expect(!searchable.contains(name), "\(name)")
        }
    }

    /// Each searchable attribute of the password classes finds exactly its items through the
    /// index, opening only them — text, numbers, four-character codes and bytes alike.
    @Test func eachSearchableAttributeFindsItsItemsOpeningOnlyThem() throws {
        let home = try KeychainHome()
        var first = genericPassword(service: "mail", account: "ada")
        first.label = "Mail"
        first.description = "password"
        first.comment = "work"
        first.creator = 0x6170_706C
        first.type = 0x7077_6421
        first.generic = Data([1, 2, 3])
        var second = genericPassword(service: "chat", account: "ada")
        second.label = "Chat"
        second.description = "password"
        second.creator = 0x6170_706D
        second.generic = Data([1, 2, 4])
        let firstID = try home.keychain.add(.genericPassword, attributes: first, secret: secret("1"), caller: Callers.appA).id
        let secondID = try home.keychain.add(.genericPassword, attributes: second, secret: secret("2"), caller: Callers.appA).id
        for index in 0..<50 {
            _ = try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "other-\(index)", account: "bob"), secret: secret("n"), caller: Callers.appA)
        }
        let cases: [(String, (inout ItemAttributes) -> Void, Set<String>)] = [
            ("label", { $0.label = "Mail" }, [firstID]),
            ("description", { $0.description = "password" }, [firstID, secondID]),
            ("comment", { $0.comment = "work" }, [firstID]),
            ("creator", { $0.creator = 0x6170_706D }, [secondID]),
            ("type", { $0.type = 0x7077_6421 }, [firstID]),
            ("generic", { $0.generic = Data([1, 2, 3]) }, [firstID]),
            ("service", { $0.service = "chat" }, [secondID]),
            ("account", { $0.account = "ada" }, [firstID, secondID]),
            (
                "label and account",
                {
                    $0.label = "Chat"; $0.account = "ada"
                }, [secondID]
            ),
            (
                "label of another",
                {
                    $0.label = "Chat"; $0.service = "mail"
                }, []
            ),
            ("another value", { $0.label = "mail" }, []),
        ]
        for (name, set, expected) in cases {
            var query = ItemAttributes()
            set(&query)
            var result: Set<String> = []
            let count = try opened(home) { result = try found(home, .genericPassword, query) }
            #expect(result == expected, "\(name)")
            #expect(count == expected.count, "\(name): opened \(count)")
        }

        let inet = try home.keychain.add(
            .internetPassword, attributes: KeychainItemTests.internetPassword(server: "a.example"), secret: secret("i"), caller: Callers.appA
        ).id
        _ = try home.keychain.add(
            .internetPassword, attributes: KeychainItemTests.internetPassword(server: "b.example", account: "bob"), secret: secret("j"),
            caller: Callers.appA)
        var byServer = ItemAttributes()
        byServer.server = "a.example"
        #expect(try found(home, .internetPassword, byServer) == [inet])
        var byPort = ItemAttributes()
        byPort.port = 443
        byPort.account = "ada"
        var result: Set<String>? = nil
        #expect(try opened(home) { result = try found(home, .internetPassword, byPort) } == 1)
        #expect(result == [inet])
        // A generic password's label is not an internet password's: the class is in the tag.
        var byLabel = ItemAttributes()
        byLabel.label = "Mail"
        #expect(try found(home, .internetPassword, byLabel).isEmpty)
    }

    /// The point: among 2,000 items, a search by label opens its match, for an application and
    /// for the CLI (which sees every group), and other groups' items with the label are not
    /// returned.
    @Test func aSearchByLabelOpensItsMatchNotEveryRow() throws {
        let home = try KeychainHome()
        for index in 0..<2_000 {
            var attributes = genericPassword(service: "s\(index)", account: "ada")
            attributes.label = "label-\(index)"
            _ = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("n"), caller: Callers.appA)
        }
        var wanted = genericPassword(service: "wanted", account: "ada")
        wanted.label = "Wanted"
        let mine = try home.keychain.add(.genericPassword, attributes: wanted, secret: secret("w"), caller: Callers.appA).id
        let theirs = try home.keychain.add(.genericPassword, attributes: wanted, secret: secret("w"), caller: Callers.appB).id
        var byLabel = ItemAttributes()
        byLabel.label = "Wanted"
        var result: Set<String> = []
        #expect(try opened(home) { result = try found(home, .genericPassword, byLabel) } == 1)
        #expect(result == [mine])
        let cli = Callers.keychainAccess(passcode: home.passcode)
        #expect(try opened(home) { result = try found(home, .genericPassword, byLabel, caller: cli) } == 2)
        #expect(result == [mine, theirs])
        // The secret comes back as a lookup's does.
        var query = ItemQuery(.genericPassword, attributes: byLabel)
        query.returnData = true
        #expect(try home.keychain.copyMatching(query, caller: Callers.appA).map(\.secret) == [secret("w")])
    }

    /// A value many items share points at many rows: more than a request's own thread may
    /// decrypt, so the index-only search declines (nil, nothing opened) and the full one finds
    /// them all.
    @Test func aValueManyItemsShareIsNotSearchedOnTheRequestsThread() throws {
        let home = try KeychainHome()
        let many = KeychainStore.indexOnlyCandidateLimit + 1
        for index in 0..<many {
            _ = try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "shared", account: "a\(index)"), secret: secret("s"), caller: Callers.appA)
        }
        var byService = ItemAttributes()
        byService.service = "shared"
        let query = ItemQuery(.genericPassword, attributes: byService, limit: .all)
        var answered = true
        #expect(try opened(home) { answered = try home.keychain.copyMatchingFromIndex(query, caller: Callers.appA) != nil } == 0)
        #expect(!answered)
        #expect(try home.keychain.copyMatching(query, caller: Callers.appA).count == many)
    }

    /// An update moves the item's tags with its values, in the same transaction.
    @Test func anUpdateChangesWhatALabelFinds() throws {
        let home = try KeychainHome()
        var attributes = genericPassword(service: "s", account: "ada")
        attributes.label = "Before"
        let id = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("1"), caller: Callers.appA).id
        var before = ItemAttributes()
        before.label = "Before"
        var changes = ItemAttributes()
        changes.label = "After"
        #expect(try home.keychain.update(ItemQuery(.genericPassword, attributes: before), changes: changes, secret: nil, caller: Callers.appA) == 1)
        #expect(try found(home, .genericPassword, before).isEmpty)
        #expect(try found(home, .genericPassword, changes) == [id])
        #expect(try home.keychain.delete(ItemQuery(.genericPassword, attributes: changes), caller: Callers.appA) == 1)
        #expect(try home.keychain.database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM custom_attribute_tags") } == 0)
    }

    /// An update of the secret alone writes the row's sealed attributes (a new modification
    /// date) and secret, and leaves its tags, index entries and wrapped row key as they were —
    /// unless the row had no attribute tags yet, which it then gets.
    @Test func anUpdateOfTheSecretAloneKeepsTheTags() throws {
        let home = try KeychainHome()
        var attributes = genericPassword(service: "s", account: "ada")
        (attributes.label, attributes.custom) = ("Kept", ["xdg:schema": "org.example"])
        let id = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("1"), caller: Callers.appA).id
        let other = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "bob"), secret: secret("2"), caller: Callers.appA
        ).id
        func row(_ id: String) throws -> [Data?] {
            try home.keychain.database.read { db in
                let columns = try #require(
                    try Row.fetchOne(
                        db, sql: "SELECT primary_key_tag, lookup_tag, group_tag, row_key, metadata FROM genp WHERE id = ?", arguments: [Int64(id)!]))
                let tags = try Data.fetchAll(db, sql: "SELECT tag FROM custom_attribute_tags WHERE item_id = ? ORDER BY tag", arguments: [Int64(id)!])
                return (0..<5).map { columns[$0] as Data? } + tags
            }
        }
        let before = try row(id)
        let query = ItemQuery(.genericPassword, attributes: genericPassword(service: "s", account: "ada"))
        #expect(try home.keychain.update(query, changes: ItemAttributes(), secret: secret("new"), caller: Callers.appA) == 1)
        let after = try row(id)
        #expect(after.count == before.count && after.count > 5)
        #expect(Array(after[0..<4]) == Array(before[0..<4]) && Array(after[5...]) == Array(before[5...]))
        #expect(after[4] != before[4])
        var returnData = query
        returnData.returnData = true
        let read = try home.keychain.copyMatching(returnData, caller: Callers.appA)
        #expect(read.map(\.secret) == [secret("new")])
        #expect(try #require(read.first?.attributes?.modificationDate) > (try #require(read.first?.attributes?.creationDate)))
        var label = ItemAttributes()
        label.label = "Kept"
        #expect(try found(home, .genericPassword, label) == [id])

        // A row without its attribute tags gets them from any update.
        try forgetIndex(home, [other])
        #expect(try !isIndexed(home, other))
        let bob = ItemQuery(.genericPassword, attributes: genericPassword(service: "s", account: "bob"))
        #expect(try home.keychain.update(bob, changes: ItemAttributes(), secret: secret("3"), caller: Callers.appA) == 1)
        #expect(try isIndexed(home, other))
        var account = ItemAttributes()
        account.account = "bob"
        #expect(try found(home, .genericPassword, account) == [other])
    }

    /// What the index shows to whoever reads the file (docs/SECURITY.md §4.22):
    /// items of one class with an equal value of one attribute share a tag, whatever their
    /// group; the value itself is not in the file.
    @Test func theFileShowsWhichItemsShareAValueButNotTheValue() throws {
        let home = try KeychainHome()
        let label = "tresor-label-\(UUID().uuidString)"
        var attributes = genericPassword(service: "one", account: "ada")
        attributes.label = label
        let first = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("1"), caller: Callers.appA).id
        attributes.service = "two"
        let second = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("2"), caller: Callers.appB).id
        let tags = try home.keychain.database.read { db in
            try [first, second].map { id in
                Set(try Data.fetchAll(db, sql: "SELECT tag FROM custom_attribute_tags WHERE item_id = ?", arguments: [Int64(id)!]))
            }
        }
        // Label and account are shared; the services differ.
        #expect(tags[0].intersection(tags[1]).count == 2)
        #expect(tags[0].count == 3 && tags[1].count == 3)
        try home.reopenKeychain()
        #expect(home.files(containing: label).isEmpty)
    }

    // MARK: Rows written before the index

    /// Rows from before v6 are found meanwhile (searches read them), and
    /// `indexUnindexedRows` gives tags to those whose class key is available: a locked class's
    /// rows wait for the unlock (`indexRowsOfUnlockedClasses`, which the daemon calls every
    /// second).
    @Test func theMigrationIndexesEachClassWhenItsKeyIsAvailable() throws {
        let home = try KeychainHome()
        var always = genericPassword(service: "always", account: "ada", accessible: .alwaysThisDeviceOnly)
        always.label = "Shared"
        var unlocked = genericPassword(service: "unlocked", account: "ada", accessible: .whenUnlocked)
        unlocked.label = "Shared"
        let alwaysID = try home.keychain.add(.genericPassword, attributes: always, secret: secret("a"), caller: Callers.appA).id
        let unlockedID = try home.keychain.add(.genericPassword, attributes: unlocked, secret: secret("u"), caller: Callers.appA).id
        try forgetIndex(home, [alwaysID, unlockedID])
        var byLabel = ItemAttributes()
        byLabel.label = "Shared"

        home.keychain.indexRowsOfUnlockedClasses()  // every class available: both indexed
        #expect(try isIndexed(home, alwaysID) && isIndexed(home, unlockedID))
        var result: Set<String>? = nil
        #expect(try opened(home) { result = try found(home, .genericPassword, byLabel) } == 2)
        #expect(result == [alwaysID, unlockedID])

        try forgetIndex(home, [alwaysID, unlockedID])
        home.lock()
        #expect(home.keychain.indexUnindexedRows() == 1)
        #expect(try isIndexed(home, alwaysID) && !isIndexed(home, unlockedID))
        // Nothing new is available: nothing read.
        home.keychain.indexRowsOfUnlockedClasses()
        #expect(try !isIndexed(home, unlockedID))
        try home.unlock()
        home.keychain.indexRowsOfUnlockedClasses()
        #expect(try isIndexed(home, unlockedID))
        result = nil
        #expect(try opened(home) { result = try found(home, .genericPassword, byLabel) } == 2)
        #expect(result == [alwaysID, unlockedID])
    }

    /// A keychain file at schema v5 (its rows indexed for their custom pairs only) is migrated
    /// when opened: its rows are found by label at once, and indexed by the migration.
    @Test func aKeychainFromBeforeTheIndexIsMigrated() throws {
        let home = try KeychainHome()
        var attributes = genericPassword(service: "s", account: "ada")
        attributes.label = "Old"
        attributes.custom = ["user": "ada"]
        let id = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("1"), caller: Callers.appA).id
        let expected = try home.keychain.database.read { db in
            Set(try Data.fetchAll(db, sql: "SELECT tag FROM custom_attribute_tags WHERE item_id = ?", arguments: [Int64(id)!]))
        }
        let customTag = home.keychain.sealing.customAttributeTag(name: "user", value: "ada", itemClass: .genericPassword)
        try home.keychain.database.write { db in
            try db.execute(sql: "DELETE FROM custom_attribute_tags WHERE tag != ?", arguments: [customTag])
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v6: searchable attribute index'")
        }
        try home.reopenKeychain()
        #expect(try !isIndexed(home, id))
        var byLabel = ItemAttributes()
        byLabel.label = "Old"
        #expect(try found(home, .genericPassword, byLabel) == [id])
        #expect(try isIndexed(home, id))
        #expect(try home.keychain.database.read { db in try Data.fetchAll(db, sql: "SELECT tag FROM custom_attribute_tags") }.count == expected.count)
        var result: Set<String>? = nil
        #expect(try opened(home) { result = try found(home, .genericPassword, byLabel) } == 1)
        #expect(result == [id])
    }
}
