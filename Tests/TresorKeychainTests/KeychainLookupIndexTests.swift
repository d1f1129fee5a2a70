import Foundation
import GRDB
import Testing
import TresorCrypto
import TresorKeybag

@testable import TresorKeychain

/// The lookup index (schema v3): a caller that sees every group (the `tresor` CLI) and names
/// none finds an item by its primary key through a blind index instead of opening every row
/// (BENCHMARKS.md: `tresor item get` without `--group` at 1,000,000 items).
@Suite struct KeychainLookupIndexTests {
    func lookupTag(_ home: KeychainHome, _ id: String) throws -> Data? {
        try home.keychain.database.read { db in
            try Data.fetchOne(db, sql: "SELECT lookup_tag FROM genp WHERE id = ?", arguments: [Int64(id)!])
        }
    }

    func setLookupTag(_ home: KeychainHome, _ id: String, to tag: Data?) throws {
        try home.keychain.database.write { db in
            try db.execute(sql: "UPDATE genp SET lookup_tag = ? WHERE id = ?", arguments: [tag, Int64(id)!])
        }
    }

    @Test func theCLIFindsAnItemInAnyGroupThroughTheIndexNotAScan() throws {
        let home = try KeychainHome()
        let cli = Callers.keychainAccess(passcode: home.passcode)
        let inA = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "db", account: "ada"), secret: secret("a"), caller: Callers.appA)
        let inB = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "db", account: "ada"), secret: secret("b"), caller: Callers.appB)
        _ = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "other", account: "ada"), secret: secret("c"), caller: Callers.appA)
        #expect(try lookupTag(home, inA.id) != nil && lookupTag(home, inA.id) == lookupTag(home, inB.id))

        // The same primary key in two groups: both found, by the index, with no group named.
        let found = try home.keychain.copyMatching(genericQuery(service: "db", account: "ada", limit: .all), caller: cli)
        #expect(Set(found.map(\.id)) == [inA.id, inB.id])

        // Proof that no scan happened: an item whose tag is wrong is not found by the CLI's
        // lookup (a scan would open it and find it), while its own application still finds it.
        try setLookupTag(home, inB.id, to: Data(repeating: 7, count: 32))
        let onlyA = try home.keychain.copyMatching(genericQuery(service: "db", account: "ada", limit: .all), caller: cli)
        #expect(onlyA.map(\.id) == [inA.id])
        #expect(try home.keychain.copyMatching(genericQuery(service: "db", account: "ada"), caller: Callers.appB).map(\.id) == [inB.id])
    }

    @Test func rowsWrittenBeforeTheIndexAreFoundAndTaggedOnFirstRead() throws {
        let home = try KeychainHome()
        let cli = Callers.keychainAccess(passcode: home.passcode)
        let item = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "old", account: "ada"), secret: secret("s"), caller: Callers.appA)
        let expected = try lookupTag(home, item.id)
        try setLookupTag(home, item.id, to: nil)  // as a v2 database's rows after the migration
        #expect(try home.keychain.copyMatching(genericQuery(service: "old", account: "ada"), caller: cli).map(\.id) == [item.id])
        #expect(try lookupTag(home, item.id) == expected)
        // An update keeps the tag in step with a changed primary key.
        var changes = ItemAttributes()
        changes.service = "renamed"
        _ = try home.keychain.update(genericQuery(service: "old", account: "ada"), changes: changes, secret: nil, caller: cli)
        #expect(throws: KeychainError.self) { try home.keychain.copyMatching(genericQuery(service: "old", account: "ada"), caller: cli) }
        #expect(try home.keychain.copyMatching(genericQuery(service: "renamed", account: "ada"), caller: cli).map(\.id) == [item.id])
    }

    /// A search no index answers reads its rows page by page (`KeychainStore.scanPageSize`): every
    /// page is seen, and the pages hold the rows in order without repeats.
    @Test func aScanOverManyPagesFindsEveryMatchOnce() throws {
        let home = try KeychainHome()
        let count = KeychainStore.scanPageSize * 2 + 7
        for index in 0..<count {
            var attributes = genericPassword(service: "svc-\(index)", account: "ada")
            attributes.label = index % 2 == 0 ? "even" : "odd"
            _ = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("s"), caller: Callers.appA)
        }
        var byLabel = ItemAttributes()
        byLabel.label = "even"
        let evens = try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byLabel, limit: .all), caller: Callers.appA)
        #expect(evens.count == (count + 1) / 2 && Set(evens.map(\.id)).count == evens.count)
        let all = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.keychainAccess(passcode: home.passcode))
        #expect(all.count == count && Set(all.map(\.id)).count == count)
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byLabel), caller: Callers.appA).count == 1)
    }

    /// `copyMatchingFromIndex` — what the daemon answers on the request's own thread — answers
    /// exactly the queries a blind index answers, with what `copyMatching` answers, and reads
    /// nothing for the others (a scan must go to another thread).
    @Test func onlyIndexAnsweredQueriesAreAnsweredFromTheIndex() throws {
        let home = try KeychainHome()
        let cli = Callers.keychainAccess(passcode: home.passcode)
        var attributes = genericPassword(service: "db", account: "ada")
        attributes.label = "Database"
        let item = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("pw"), caller: Callers.appA)
        _ = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "db", account: "bob"), secret: secret("x"), caller: Callers.appA)

        for caller in [Callers.appA, cli] {
            let query = genericQuery(service: "db", account: "ada")
            let fromIndex = try #require(try home.keychain.copyMatchingFromIndex(query, caller: caller))
            #expect(fromIndex == (try home.keychain.copyMatching(query, caller: caller)))
            #expect(fromIndex.map(\.id) == [item.id])
        }
        var byID = ItemQuery(.genericPassword)
        byID.id = item.id
        #expect(try home.keychain.copyMatchingFromIndex(byID, caller: Callers.appA)?.map(\.id) == [item.id])
        // Another application's item is not found through the index either.
        #expect(throws: KeychainError.itemNotFound) {
            try home.keychain.copyMatchingFromIndex(genericQuery(service: "db", account: "ada"), caller: Callers.appB)
        }
        // A label, or a primary key left incomplete, is answered by the attribute index.
        var byLabel = ItemAttributes()
        byLabel.label = "Database"
        #expect(
            try home.keychain.copyMatchingFromIndex(ItemQuery(.genericPassword, attributes: byLabel), caller: Callers.appA)?.map(\.id) == [item.id])
        var serviceOnly = ItemAttributes()
        serviceOnly.service = "db"
        #expect(
            try home.keychain.copyMatchingFromIndex(ItemQuery(.genericPassword, attributes: serviceOnly, limit: .all), caller: cli)?.count == 2)
        // An attribute no index holds needs a scan: nil, not an answer.
        var byScripts = ItemAttributes()
        byScripts.readableByScripts = false
        #expect(try home.keychain.copyMatchingFromIndex(ItemQuery(.genericPassword, attributes: byScripts), caller: Callers.appA) == nil)
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byLabel), caller: Callers.appA).map(\.id) == [item.id])
    }

    /// Attribute values match byte for byte, as the blind index compares them: a service
    /// written with a precomposed "é" is not found by its decomposed spelling (which Swift's
    /// `==` would call equal), by a scan or through the index; numbers still match as numbers.
    @Test func valuesMatchByTheirBytesLikeTheIndex() throws {
        let home = try KeychainHome()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality, which matching must not use
        var attributes = genericPassword(service: composed, account: "ada")
        attributes.label = composed
        let item = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("s"), caller: Callers.appA)

        #expect(try home.keychain.copyMatching(genericQuery(service: composed, account: "ada"), caller: Callers.appA).map(\.id) == [item.id])
        #expect(throws: KeychainError.itemNotFound) {
            try home.keychain.copyMatching(genericQuery(service: decomposed, account: "ada"), caller: Callers.appA)
        }
        var byLabel = ItemAttributes()
        byLabel.label = decomposed
        #expect(throws: KeychainError.itemNotFound) {
            try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byLabel), caller: Callers.appA)
        }
        byLabel.label = composed
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, attributes: byLabel), caller: Callers.appA).map(\.id) == [item.id])

        let inet = try home.keychain.add(
            .internetPassword, attributes: KeychainItemTests.internetPassword(), secret: secret("i"), caller: Callers.appA)
        var byPort = ItemAttributes()
        byPort.port = 443
        #expect(try home.keychain.copyMatching(ItemQuery(.internetPassword, attributes: byPort), caller: Callers.appA).map(\.id) == [inet.id])
        byPort.port = 8443
        #expect(throws: KeychainError.itemNotFound) {
            try home.keychain.copyMatching(ItemQuery(.internetPassword, attributes: byPort), caller: Callers.appA)
        }
    }
}
