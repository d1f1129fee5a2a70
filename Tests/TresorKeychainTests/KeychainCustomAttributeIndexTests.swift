import Foundation
import GRDB
import Synchronization
import Testing
import TresorKeybag

@testable import TresorKeychain

/// The custom attribute index (schema v4): a search by pairs of the free-form attribute map
/// (the Secret Service's, e.g. `{"xdg:schema": …, "user": "ada"}`) opens the rows holding every
/// pair — and rows written before the index — instead of every row of the caller's groups.
@Suite struct KeychainCustomAttributeIndexTests {
    // MARK: Helpers

    func item(_ service: String, custom: [String: String]?, group: String? = nil) -> ItemAttributes {
        var attributes = genericPassword(service: service, account: "ada", group: group)
        attributes.custom = custom
        return attributes
    }

    func query(_ custom: [String: String], group: String? = nil, limit: ItemQuery.Limit = .all) -> ItemQuery {
        var attributes = ItemAttributes()
        attributes.custom = custom
        attributes.accessGroup = group
        return ItemQuery(.genericPassword, attributes: attributes, limit: limit)
    }

    /// The ids `custom` finds for `caller`, empty when nothing is found. Asks through
    /// `copyMatchingFromIndex`, which answers only from an index (nil would be a scan).
    func found(_ home: KeychainHome, _ custom: [String: String], group: String? = nil, caller: Caller = Callers.appA) throws -> Set<String> {
        do {
            let items = try #require(try home.keychain.copyMatchingFromIndex(query(custom, group: group), caller: caller))
            return Set(items.map(\.id))
        } catch KeychainError.itemNotFound {
            return []
        }
    }

    /// How many rows' attributes `body` opened.
    func opened(_ home: KeychainHome, _ body: () throws -> Void) rethrows -> Int {
        let before = home.keychain.metadataOpenCount.load(ordering: .relaxed)
        try body()
        return home.keychain.metadataOpenCount.load(ordering: .relaxed) - before
    }

    /// The row's tags of its custom attribute pairs: its tags but those of its searchable
    /// attributes (``KeychainAttributeIndexTests`` covers those).
    func tags(_ home: KeychainHome, _ id: String) throws -> Set<Data> {
        let all = try home.keychain.database.read { db in
            Set(
                try Data.fetchAll(db, sql: "SELECT tag FROM custom_attribute_tags WHERE item_class = 'genp' AND item_id = ?", arguments: [Int64(id)!])
            )
        }
        return all.subtracting(try searchableAttributeTags(home, id))
    }

    /// The tags of the row's searchable attributes, from its attributes opened directly (no
    /// search: a search would index the row).
    func searchableAttributeTags(_ home: KeychainHome, _ id: String) throws -> Set<Data> {
        let keychain = home.keychain
        return try keychain.database.read { db in
            guard let stored = try StoredItem.fetch(db, table: "genp", id: Int64(id)!) else { return [] }
            let protectionClass = try #require(ProtectionClass(rawValue: stored.protectionClass))
            let classKey = try keychain.keybag.classKey(for: protectionClass)
            let key = try keychain.metadataKey(.genericPassword, protectionClass, classKey: classKey, db: db, create: false)
            let json = try keychain.sealing.openMetadataJSON(stored, itemClass: .genericPassword, key: key)
            var attributes = try keychain.sealing.decodeMetadata(json, of: stored)
            attributes.custom = nil
            return Set(keychain.sealing.attributeTags(AttributeValues(attributes), itemClass: .genericPassword))
        }
    }

    /// How many custom attribute tags the generic passwords have.
    func tagRowCount(_ home: KeychainHome) throws -> Int {
        let ids = try home.keychain.database.read { db in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT item_id FROM custom_attribute_tags WHERE item_class = 'genp'")
        }
        return try ids.reduce(0) { $0 + (try tags(home, String($1))).count }
    }

    func isIndexed(_ home: KeychainHome, _ id: String) throws -> Bool {
        try home.keychain.database.read { db in
            try Int.fetchOne(db, sql: "SELECT custom_indexed FROM genp WHERE id = ?", arguments: [Int64(id)!]) != nil
        }
    }

    /// Makes rows look as a v3 database's do after the v4 migration: no tags, marker NULL.
    func forgetIndex(_ home: KeychainHome, _ ids: [String]) throws {
        try home.keychain.database.write { db in
            for id in ids {
                try db.execute(sql: "DELETE FROM custom_attribute_tags WHERE item_class = 'genp' AND item_id = ?", arguments: [Int64(id)!])
                try db.execute(sql: "UPDATE genp SET custom_indexed = NULL WHERE id = ?", arguments: [Int64(id)!])
            }
        }
    }

    // MARK: Matching

    @Test func oneOrSeveralPairsFindTheItemsHoldingThemAll() throws {
        let home = try KeychainHome()
        let schema = "org.gnome.keyring.NetworkPassword"
        let ada = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: ["xdg:schema": schema, "user": "ada", "server": "git"]), secret: secret("1"),
            caller: Callers.appA
        ).id
        let bob = try home.keychain.add(
            .genericPassword, attributes: item("2", custom: ["xdg:schema": schema, "user": "bob"]), secret: secret("2"), caller: Callers.appA
        ).id
        let other = try home.keychain.add(
            .genericPassword, attributes: item("3", custom: ["xdg:schema": "org.example.Other", "user": "ada"]), secret: secret("3"),
            caller: Callers.appA
        ).id
        _ = try home.keychain.add(.genericPassword, attributes: item("4", custom: nil), secret: secret("4"), caller: Callers.appA)

        #expect(try found(home, ["xdg:schema": schema]) == [ada, bob])
        #expect(try found(home, ["user": "ada"]) == [ada, other])
        #expect(try found(home, ["xdg:schema": schema, "user": "ada"]) == [ada])
        #expect(try found(home, ["xdg:schema": schema, "user": "ada", "server": "git"]) == [ada])
        // Every named pair must be there: one more than the item has, or one differing value, finds nothing.
        #expect(try found(home, ["xdg:schema": schema, "user": "bob", "server": "git"]).isEmpty)
        #expect(try found(home, ["user": "ADA"]).isEmpty)
        #expect(try found(home, ["user": "ad"]).isEmpty)
        #expect(try found(home, ["nobody-has-this": "ada"]).isEmpty)
        // A value is not a name: the pair user=ada is not found under the name "ada".
        #expect(try found(home, ["ada": "user"]).isEmpty)
        // With limit one, one of the matches.
        let one = try home.keychain.copyMatching(query(["xdg:schema": schema], limit: .one), caller: Callers.appA)
        #expect(one.count == 1 && [ada, bob].contains(one[0].id))
    }

    /// The index narrows the rows; the query's other attributes still decide.
    @Test func otherAttributesOfTheQueryStillFilter() throws {
        let home = try KeychainHome()
        var work = item("1", custom: ["user": "ada"])
        work.label = "Work"
        var home1 = item("2", custom: ["user": "ada"])
        home1.label = "Home"
        let workID = try home.keychain.add(.genericPassword, attributes: work, secret: secret("w"), caller: Callers.appA).id
        _ = try home.keychain.add(.genericPassword, attributes: home1, secret: secret("h"), caller: Callers.appA)
        var byBoth = query(["user": "ada"])
        byBoth.attributes.label = "Work"
        #expect(try home.keychain.copyMatchingFromIndex(byBoth, caller: Callers.appA)?.map(\.id) == [workID])
        byBoth.attributes.label = "Elsewhere"
        expectKeychainError(.itemNotFound) { try home.keychain.copyMatching(byBoth, caller: Callers.appA) }
        // A synchronizable item is not found by a query that does not ask for one (Apple's rule).
        var synced = item("3", custom: ["user": "ada"])
        synced.synchronizable = true
        let syncedID = try home.keychain.add(.genericPassword, attributes: synced, secret: secret("s"), caller: Callers.appA).id
        #expect(try !found(home, ["user": "ada"]).contains(syncedID))
    }

    /// Name and value are encoded with their lengths: pairs whose bytes run together the same
    /// way (`"a=b" → "c"` against `"a" → "b=c"`, or a NUL inside a name) are different pairs.
    @Test func pairsThatSplitTheSameBytesDifferentlyDoNotCollide() throws {
        let home = try KeychainHome()
        let pairs: [(String, String)] = [
            ("a=b", "c"), ("a", "b=c"), ("a\0b", "c"), ("a", "b\0c"), ("ab", "c"), ("a", "bc"), ("", "abc"), ("abc", ""),
            ("a\u{1}", "bc"), ("caf\u{E9}", "x"), ("cafe\u{301}", "x"),
        ]
        var ids: [String] = []
        for (index, (name, value)) in pairs.enumerated() {
            ids.append(
                try home.keychain.add(
                    .genericPassword, attributes: item("s\(index)", custom: [name: value]), secret: secret("\(index)"), caller: Callers.appA
                ).id)
        }
        for (index, (name, value)) in pairs.enumerated() {
            #expect(try found(home, [name: value]) == [ids[index]], "pair \(index)")
        }
        let allTags = try ids.map { try tags(home, $0) }
        #expect(Set(allTags.flatMap { $0 }).count == pairs.count && allTags.allSatisfy { $0.count == 1 })
        // The same pair in another class is another tag: classes do not show as sharing pairs.
        let sealing = home.keychain.sealing
        #expect(
            sealing.customAttributeTag(name: "a", value: "b", itemClass: .genericPassword)
                != sealing.customAttributeTag(name: "a", value: "b", itemClass: .internetPassword))
    }

    /// Values match by their bytes, indexed or not: a decomposed "é" does not find a precomposed
    /// one (Swift's `==` and dictionary lookup would), so a row read before it was indexed is
    /// found exactly when it would be once indexed.
    @Test func valuesMatchByTheirBytesWhetherTheRowIsIndexedOrNot() throws {
        let home = try KeychainHome()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let id = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: [composed: composed]), secret: secret("1"), caller: Callers.appA
        ).id
        for indexed in [true, false] {
            if !indexed { try forgetIndex(home, [id]) }
            #expect(try found(home, [decomposed: composed]).isEmpty, "indexed: \(indexed)")
            if !indexed { try forgetIndex(home, [id]) }
            #expect(try found(home, [composed: decomposed]).isEmpty, "indexed: \(indexed)")
            if !indexed { try forgetIndex(home, [id]) }
            #expect(try found(home, [composed: composed]) == [id], "indexed: \(indexed)")
        }
    }

    /// What the index shows to whoever reads the file (docs/SECURITY.md): items sharing a
    /// name=value pair share a tag, whatever their group, and each item's number of pairs is
    /// its number of tag rows. What it does not show: the names and values themselves.
    @Test func theFileShowsWhichItemsSharePairsAndHowManyButNotThePairs() throws {
        let home = try KeychainHome()
        let name = "tresor-custom-name-\(UUID().uuidString)", value = "tresor-custom-value-\(UUID().uuidString)"
        let first = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: [name: value, "user": "ada"]), secret: secret("1"), caller: Callers.appA
        ).id
        let second = try home.keychain.add(.genericPassword, attributes: item("2", custom: [name: value]), secret: secret("2"), caller: Callers.appB)
            .id
        let third = try home.keychain.add(
            .genericPassword, attributes: item("3", custom: [name: "other", "a": "1", "b": "2"]), secret: secret("3"), caller: Callers.appA
        ).id
        let (firstTags, secondTags, thirdTags) = try (tags(home, first), tags(home, second), tags(home, third))
        #expect(firstTags.count == 2 && secondTags.count == 1 && thirdTags.count == 3)
        #expect(firstTags.intersection(secondTags).count == 1)  // the shared pair, across applications
        #expect(firstTags.isDisjoint(with: thirdTags) && secondTags.isDisjoint(with: thirdTags))  // same name, another value
        try home.reopenKeychain()  // checkpointed: everything is in the main file too
        #expect(home.files(containing: name).isEmpty && home.files(containing: value).isEmpty)
    }

    /// Tags are only a way to the candidates: should another row carry a pair's tag (a
    /// collision, or an edited file), opening it shows it does not match, and it is not returned.
    @Test func aRowCarryingAnotherPairsTagIsNotReturned() throws {
        let home = try KeychainHome()
        let ada = try home.keychain.add(.genericPassword, attributes: item("1", custom: ["user": "ada"]), secret: secret("1"), caller: Callers.appA)
            .id
        let bob = try home.keychain.add(.genericPassword, attributes: item("2", custom: ["user": "bob"]), secret: secret("2"), caller: Callers.appA)
            .id
        let adaTag = try #require(try tags(home, ada).first)
        try home.keychain.database.write { db in
            try db.execute(
                sql: "INSERT INTO custom_attribute_tags (tag, item_class, item_id) VALUES (?, 'genp', ?)", arguments: [adaTag, Int64(bob)!])
        }
        var result: Set<String> = []
        let count = try opened(home) { result = try found(home, ["user": "ada"]) }
        #expect(result == [ada])
        #expect(count == 2)  // bob's row was a candidate, opened, and refused
    }

    // MARK: Groups

    @Test func otherGroupsItemsAreNeverReturned() throws {
        let home = try KeychainHome()
        let pair = ["xdg:schema": "org.example.Password"]
        let inA = try home.keychain.add(.genericPassword, attributes: item("a", custom: pair), secret: secret("a"), caller: Callers.appA).id
        let inTeam = try home.keychain.add(
            .genericPassword, attributes: item("t", custom: pair, group: "TEAM1.shared"), secret: secret("t"), caller: Callers.appA
        ).id
        let inB = try home.keychain.add(.genericPassword, attributes: item("b", custom: pair), secret: secret("b"), caller: Callers.appB).id

        #expect(try found(home, pair, caller: Callers.appA) == [inA, inTeam])
        #expect(try found(home, pair, caller: Callers.appA2) == [inTeam])
        #expect(try found(home, pair, caller: Callers.appB) == [inB])
        #expect(try found(home, pair, group: "TEAM1.shared", caller: Callers.appA) == [inTeam])
        // The CLI sees every group, and only the one it names when it names one.
        let cli = Callers.keychainAccess(passcode: home.passcode)
        #expect(try found(home, pair, caller: cli) == [inA, inTeam, inB])
        #expect(try found(home, pair, group: "B.app", caller: cli) == [inB])
        // Naming another application's group is refused, not answered.
        expectKeychainError(.missingEntitlement) { try home.keychain.copyMatchingFromIndex(query(pair, group: "B.app"), caller: Callers.appA) }
        // Another application's items are not even opened.
        #expect(try opened(home) { _ = try found(home, pair, caller: Callers.appB) } == 1)
    }

    // MARK: Keeping the index in step

    @Test func anUpdateChangesWhatIsFoundInTheSameTransaction() throws {
        let home = try KeychainHome()
        let id = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: ["user": "ada", "role": "admin"]), secret: secret("1"), caller: Callers.appA
        ).id
        let before = try tags(home, id)
        #expect(before.count == 2)

        var changes = ItemAttributes()
        changes.custom = ["user": "bob"]
        #expect(try home.keychain.update(query(["user": "ada"]), changes: changes, secret: nil, caller: Callers.appA) == 1)
        #expect(try found(home, ["user": "ada"]).isEmpty)
        #expect(try found(home, ["role": "admin"]).isEmpty)
        #expect(try found(home, ["user": "bob"]) == [id])
        let after = try tags(home, id)
        #expect(after.count == 1 && after.isDisjoint(with: before))

        // An update of other attributes leaves the pairs found.
        changes = ItemAttributes()
        changes.label = "renamed"
        _ = try home.keychain.update(query(["user": "bob"]), changes: changes, secret: secret("2"), caller: Callers.appA)
        #expect(try found(home, ["user": "bob"]) == [id])
        #expect(try tags(home, id) == after)

        // Moving the item to another group moves it out of sight of that group's searches.
        changes = ItemAttributes()
        changes.accessGroup = "TEAM1.shared"
        _ = try home.keychain.update(query(["user": "bob"]), changes: changes, secret: nil, caller: Callers.appA)
        #expect(try found(home, ["user": "bob"], caller: Callers.appA2) == [id])

        // Removing every pair leaves no tag.
        changes = ItemAttributes()
        changes.custom = [:]
        _ = try home.keychain.update(query(["user": "bob"]), changes: changes, secret: nil, caller: Callers.appA)
        #expect(try tags(home, id).isEmpty && isIndexed(home, id))
    }

    /// An update that fails (a duplicate primary key) changes no tag either.
    @Test func aRefusedUpdateKeepsTheTags() throws {
        let home = try KeychainHome()
        let first = try home.keychain.add(.genericPassword, attributes: item("1", custom: ["user": "ada"]), secret: secret("1"), caller: Callers.appA)
            .id
        _ = try home.keychain.add(.genericPassword, attributes: item("2", custom: nil), secret: secret("2"), caller: Callers.appA)
        let before = try tags(home, first)
        var changes = ItemAttributes()
        changes.service = "2"
        changes.custom = ["user": "bob"]
        expectKeychainError(.duplicateItem) { try home.keychain.update(query(["user": "ada"]), changes: changes, secret: nil, caller: Callers.appA) }
        #expect(try tags(home, first) == before)
        #expect(try found(home, ["user": "ada"]) == [first])
    }

    @Test func deleteAndPurgeRemoveTheTags() throws {
        let home = try KeychainHome()
        let gone = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: ["user": "ada", "k": "v"]), secret: secret("1"), caller: Callers.appA
        ).id
        let kept = try home.keychain.add(.genericPassword, attributes: item("2", custom: ["user": "ada"]), secret: secret("2"), caller: Callers.appA)
            .id
        var passcodeBound = item("3", custom: ["user": "ada"])
        passcodeBound.accessible = .whenPasscodeSetThisDeviceOnly
        _ = try home.keychain.add(.genericPassword, attributes: passcodeBound, secret: secret("3"), caller: Callers.appA)
        #expect(try tagRowCount(home) == 4)

        #expect(try home.keychain.delete(genericQuery(service: "1", account: "ada"), caller: Callers.appA) == 1)
        #expect(try tags(home, gone).isEmpty)
        #expect(try tagRowCount(home) == 2)

        try home.keybag.removePasscode(current: try #require(home.passcode))
        #expect(try home.keychain.purge(.whenPasscodeSetThisDeviceOnly) == 1)
        #expect(try tagRowCount(home) == 1)
        #expect(try found(home, ["user": "ada"]) == [kept])
    }

    // MARK: Rows written before the index

    /// A home from before v4 has rows without tags: searches read them too, and index each
    /// the first time it is opened — whatever the read (a search by pairs, or a scan).
    @Test func rowsWrittenBeforeTheIndexAreFoundAndIndexedOnceOpened() throws {
        let home = try KeychainHome()
        let ada = try home.keychain.add(
            .genericPassword, attributes: item("1", custom: ["user": "ada", "k": "v"]), secret: secret("1"), caller: Callers.appA
        ).id
        let bob = try home.keychain.add(.genericPassword, attributes: item("2", custom: ["user": "bob"]), secret: secret("2"), caller: Callers.appA)
            .id
        let plain = try home.keychain.add(.genericPassword, attributes: item("3", custom: nil), secret: secret("3"), caller: Callers.appA).id
        let inB = try home.keychain.add(.genericPassword, attributes: item("4", custom: ["user": "ada"]), secret: secret("4"), caller: Callers.appB)
            .id
        let expected = try [ada, bob, plain, inB].map { try tags(home, $0) }
        try forgetIndex(home, [ada, bob, plain, inB])
        #expect(try tagRowCount(home) == 0)

        // The first search opens the caller's not-yet-indexed rows and finds the match.
        var result: Set<String> = []
        #expect(try opened(home) { result = try found(home, ["user": "ada"]) } == 3)
        #expect(result == [ada])
        // They are indexed now, with the tags an add would have given them; B's row, which
        // appA's search did not open, is not.
        #expect(try [ada, bob, plain].map { try tags(home, $0) } == Array(expected[0..<3]))
        #expect(try [ada, bob, plain].allSatisfy { try isIndexed(home, $0) })
        #expect(try !isIndexed(home, inB))
        // The next search opens its match alone.
        #expect(try opened(home) { result = try found(home, ["user": "ada"]) } == 1)
        #expect(result == [ada])
        #expect(try found(home, ["user": "ada"], caller: Callers.appB) == [inB])
        #expect(try tags(home, inB) == expected[3])

        // A scan indexes what it opens too.
        try forgetIndex(home, [bob])
        var byService = ItemAttributes()
        byService.service = "2"
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byService), caller: Callers.appA).map(\.id) == [bob])
        #expect(try isIndexed(home, bob) && tags(home, bob) == expected[1])
    }

    /// The migration itself: a keychain file taken back to schema v3 (no tag table, no
    /// marker column) is migrated when it is opened, and its rows are found and indexed.
    @Test func aKeychainFromBeforeTheIndexIsMigratedAndItsRowsFound() throws {
        let home = try KeychainHome()
        let ada = try home.keychain.add(.genericPassword, attributes: item("1", custom: ["user": "ada"]), secret: secret("1"), caller: Callers.appA)
            .id
        let bob = try home.keychain.add(.genericPassword, attributes: item("2", custom: ["user": "bob"]), secret: secret("2"), caller: Callers.appA)
            .id
        let expected = try tags(home, ada)
        try home.keychain.database.write { db in
            for table in ItemClass.allCases.map(\.table) {
                try db.execute(
                    sql: """
                        DROP TRIGGER \(table)_custom_tags_cleanup;
                        DROP INDEX \(table)_custom_unindexed;
                        ALTER TABLE \(table) DROP COLUMN custom_indexed;
                        """)
            }
            try db.execute(sql: "DROP TABLE custom_attribute_tags; DELETE FROM grdb_migrations WHERE identifier = 'v4: custom attribute index'")
        }
        try home.reopenKeychain()
        #expect(try tagRowCount(home) == 0 && !isIndexed(home, ada) && !isIndexed(home, bob))
        #expect(try found(home, ["user": "ada"]) == [ada])
        #expect(try tags(home, ada) == expected && isIndexed(home, bob))
        var result: Set<String> = []
        #expect(try opened(home) { result = try found(home, ["user": "bob"]) } == 1)
        #expect(result == [bob])
    }

    /// A row indexed meanwhile by an update keeps the update's tags: indexing an opened row
    /// writes only while it is still unindexed.
    @Test func indexingAnOpenedRowLeavesARowWrittenSinceAlone() throws {
        let home = try KeychainHome()
        let id = try home.keychain.add(.genericPassword, attributes: item("1", custom: ["user": "bob"]), secret: secret("1"), caller: Callers.appA).id
        let current = try tags(home, id)
        let stale = home.keychain.sealing.customAttributeTags(["user": "ada"], itemClass: .genericPassword)
        home.keychain.indexOpenedRows([KeychainStore.UnindexedRow(id: Int64(id)!, customTags: stale)], itemClass: .genericPassword)
        #expect(try tags(home, id) == current)
    }

    // MARK: No scan

    /// The point of the index: among 2,000 items that do not match, a search by pairs opens the
    /// three that do, for an application and for the CLI alike.
    @Test func aSearchOpensItsMatchesNotEveryRow() throws {
        let home = try KeychainHome()
        for index in 0..<2_000 {
            let custom = ["xdg:schema": "org.example.Password", "user": "user-\(index)"]
            _ = try home.keychain.add(.genericPassword, attributes: item("n\(index)", custom: custom), secret: secret("n"), caller: Callers.appA)
        }
        var matches: Set<String> = []
        for index in 0..<3 {
            let custom = ["xdg:schema": "org.example.Password", "user": "ada", "n": "\(index)"]
            matches.insert(
                try home.keychain.add(.genericPassword, attributes: item("m\(index)", custom: custom), secret: secret("m"), caller: Callers.appA).id)
        }
        let cli = Callers.keychainAccess(passcode: home.passcode)
        for caller in [Callers.appA, cli] {
            var result: Set<String> = []
            #expect(try opened(home) { result = try found(home, ["user": "ada"], caller: caller) } == 3)
            #expect(result == matches)
            #expect(
                try opened(home) { result = try found(home, ["xdg:schema": "org.example.Password", "user": "ada", "n": "1"], caller: caller) } == 1)
            #expect(result.count == 1 && matches.isSuperset(of: result))
            #expect(try opened(home) { result = try found(home, ["user": "nobody"], caller: caller) } == 0)
            #expect(result.isEmpty)
        }
        // A search by an attribute no index holds still opens every row: the counter counts.
        var byScripts = ItemAttributes()
        byScripts.readableByScripts = true
        #expect(
            opened(home) {
                expectKeychainError(.itemNotFound) {
                    try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byScripts), caller: Callers.appA)
                }
            } == 2_003)
    }

    /// A search for a pair every item shares (libsecret's `xdg:schema`) and one only a few hold
    /// starts from the rare one, whichever order it names them in: the common pair is then
    /// probed per candidate, not read once per item holding it.
    @Test func theRarestPairDrivesTheSearch() throws {
        let home = try KeychainHome()
        let schema = ["xdg:schema": "org.example.Password"]
        // 36 and 80 rows: both past the first bound of 32, so ordering has to count further.
        for index in 0..<80 {
            let custom = schema.merging(["user": index < 36 ? "ada" : "user\(index)"]) { $1 }
            _ = try home.keychain.add(.genericPassword, attributes: item("s\(index)", custom: custom), secret: secret("s"), caller: Callers.appA)
        }
        let sealing = home.keychain.sealing
        let common = sealing.customAttributeTags(schema, itemClass: .genericPassword)
        let rare = sealing.customAttributeTags(["user": "ada"], itemClass: .genericPassword)
        let absent = sealing.customAttributeTags(["user": "nobody"], itemClass: .genericPassword)
        try home.keychain.database.read { (db: Database) throws in
            #expect(try KeychainStore.rarestFirst(db, tags: common + rare, itemClass: .genericPassword).first == rare[0])
            #expect(try KeychainStore.rarestFirst(db, tags: rare + common, itemClass: .genericPassword).first == rare[0])
            #expect(try KeychainStore.rarestFirst(db, tags: common + rare + absent, itemClass: .genericPassword).first == absent[0])
            #expect(try KeychainStore.customAttributeCandidates(db, tags: common + rare, itemClass: .genericPassword, groupTags: nil).count == 36)
            #expect(try KeychainStore.customAttributeCandidates(db, tags: common + absent, itemClass: .genericPassword, groupTags: nil).isEmpty)
        }
    }

    /// The candidates' statement reads the tags it names, and the rows they point at, through
    /// indexes — SQLite, without statistics, would otherwise walk every tag of the class or
    /// every row of the groups (which `aSearchOpensItsMatchesNotEveryRow` would not see: it
    /// counts decryptions, not rows SQLite reads). So does the statement that reads the rows
    /// themselves a page at a time: the page's start never makes it walk the ids above it.
    @Test(arguments: ["id", StoredItem.selection])
    func theCandidatesAreReadThroughIndexesOnly(columns: String) throws {
        let home = try KeychainHome()
        let paged = columns != "id"
        for groupCount in [nil, 1, 2] as [Int?] {
            for tagCount in [1, 3] {
                let sql = KeychainStore.customAttributeCandidatesSQL(.genericPassword, tagCount: tagCount, groupCount: groupCount, columns: columns)
                var arguments = StatementArguments()
                for index in 0..<tagCount { arguments += [Data(repeating: UInt8(index), count: 32), "genp"] }
                let groups =
                    StatementArguments(Array(repeating: Data(repeating: 0xFF, count: 32), count: groupCount ?? 0)) + (paged ? [Int64.min] : [])
                arguments += groups + groups + (paged ? [512] : [])
                let plan = try home.keychain.database.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { row -> String in row["detail"] }
                }
                let context = "groups: \(String(describing: groupCount)), tags: \(tagCount), plan: \(plan)"
                #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(context)")
                #expect(plan.contains { $0.contains("t0 USING PRIMARY KEY (tag=? AND item_class=?)") }, "\(context)")
                #expect(plan.contains { $0.contains("genp USING INTEGER PRIMARY KEY") }, "\(context)")
                #expect(plan.contains { $0.contains("genp_custom_unindexed") }, "\(context)")
                if tagCount > 1 {
                    #expect(plan.contains { $0.contains("CORRELATED") }, "\(context)")
                    #expect(plan.contains { $0.contains("PRIMARY KEY (tag=? AND item_class=? AND item_id=?)") }, "\(context)")
                }
            }
        }
    }
}
