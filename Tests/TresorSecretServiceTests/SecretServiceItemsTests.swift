import Foundation
import Testing
import TresorKeybag
import TresorKeychain
import TresorSecretService
import TresorSystem

/// How Secret Service items are kept, shared by `CreateItem` and `tresor import secret-service`.
@Suite struct SecretServiceItemsTests {
    /// A keychain on a fresh home with an unlocked keybag (no passcode, cheap KDF); the
    /// folder is removed when `body` returns.
    func withKeychain(_ body: (KeychainStore) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-ss-items-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = TresorPaths(home: root.appendingPathComponent("home").path, environment: ["HOME": root.path])
        let keybag = try Keybag.create(paths: paths, passcode: nil, settings: .insecureForTesting(kdfRounds: 1_000))
        try body(try KeychainStore(file: paths.home.appendingPathComponent("login.keychain.db"), keybag: keybag))
    }

    let owner = Caller(accessGroups: ["exe:/usr/bin/secret-tool"], defaultAccessGroup: "exe:/usr/bin/secret-tool")
    let other = Caller(accessGroups: ["exe:/usr/bin/other"], defaultAccessGroup: "exe:/usr/bin/other")

    @Test func anItemIsAGenericPasswordThatKeepsItsOwnDates() throws {
        try withKeychain { keychain in
            let created = Date(timeIntervalSince1970: 1_600_000_000), modified = Date(timeIntervalSince1970: 1_700_000_000)
            let added = try SecretServiceItems.add(
                label: "Mail", attributes: ["service": "mail"], secret: Data("s3cret".utf8), contentType: "text/plain",
                dates: (created, modified), to: keychain, caller: owner)
            let stored = try #require(
                try keychain.copyMatching(ItemQuery(.genericPassword, id: added.id, returnAttributes: true), caller: owner).first?.attributes)
            #expect(stored.service == SecretServiceItems.service && stored.label == "Mail" && stored.custom == ["service": "mail"])
            #expect(stored.accessGroup == "exe:/usr/bin/secret-tool" && SecretServiceItems.contentType(of: stored) == "text/plain")
            #expect(stored.creationDate == created && stored.modificationDate == modified)

            // A modification before the creation is taken as the creation.
            let backwards = try SecretServiceItems.add(
                label: "Odd", attributes: [:], secret: Data("x".utf8), contentType: "text/plain", dates: (modified, created), to: keychain,
                caller: owner)
            let odd = try #require(
                try keychain.copyMatching(ItemQuery(.genericPassword, id: backwards.id, returnAttributes: true), caller: owner).first?.attributes)
            #expect(odd.creationDate == modified && odd.modificationDate == modified)
        }
    }

    @Test func containsMatchesLabelTheWholeAttributeMapAndSecretInTheCallersGroupsOnly() throws {
        try withKeychain { keychain in
            let attributes = ["service": "mail", "account": "ada"]
            try SecretServiceItems.add(
                label: "Mail", attributes: attributes, secret: Data("s3cret".utf8), contentType: "text/plain", to: keychain, caller: owner)
            try SecretServiceItems.add(
                label: "Bare", attributes: [:], secret: Data("bare".utf8), contentType: "text/plain", to: keychain, caller: owner)
            func contains(_ label: String, _ attributes: [String: String], _ secret: String, _ caller: Caller) throws -> Bool {
                try SecretServiceItems.contains(label: label, attributes: attributes, secret: Data(secret.utf8), in: keychain, caller: caller)
            }
            #expect(try contains("Mail", attributes, "s3cret", owner))
            #expect(try contains("Bare", [:], "bare", owner))
            #expect(try !contains("Mail", attributes, "other", owner), "another secret")
            #expect(try !contains("Mail 2", attributes, "s3cret", owner), "another label")
            #expect(try !contains("Mail", ["service": "mail"], "s3cret", owner), "a subset of the attributes")
            #expect(try !contains("Mail", attributes.merging(["x": "y"]) { $1 }, "s3cret", owner), "more attributes")
            #expect(try !contains("Mail", attributes, "s3cret", other), "another executable's group")
        }
    }

    @Test func overTheLimitsNothingIsAdded() throws {
        try withKeychain { keychain in
            let long = String(repeating: "a", count: 4097)
            #expect(throws: KeychainError.self) {
                try SecretServiceItems.add(label: long, attributes: [:], secret: Data(), contentType: "text/plain", to: keychain, caller: owner)
            }
            #expect(throws: KeychainError.self) {
                try SecretServiceItems.add(label: "x", attributes: [:], secret: Data(), contentType: long, to: keychain, caller: owner)
            }
            #expect(throws: KeychainError.itemNotFound) { try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: owner) }
        }
    }
}
