import Foundation
import Testing
import TresorKeybag
import TresorTestSupport

@testable import TresorKeychain

/// Access groups, the keychain-access application and user presence (docs/API.md, "Access
/// groups: who may use which", "User presence").
@Suite struct KeychainAccessGroupTests {
    /// A home where B has one item in its own group and A one in its own and one shared.
    func homeWithItems() throws -> (home: KeychainHome, bItem: KeychainItem, aItem: KeychainItem, sharedItem: KeychainItem) {
        let home = try KeychainHome()
        let bItem = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "b-service", account: "b"), secret: secret("b-secret"), caller: Callers.appB)
        let aItem = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "a-service", account: "a"), secret: secret("a-secret"), caller: Callers.appA)
        let sharedItem = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "shared-service", account: "a", group: "TEAM1.shared"),
            secret: secret("shared-secret"), caller: Callers.appA)
        return (home, bItem, aItem, sharedItem)
    }

    @Test func newItemsGoToTheCallersDefaultGroup() throws {
        let (home, bItem, aItem, sharedItem) = try homeWithItems()
        #expect(bItem.attributes?.accessGroup == "B.app")
        #expect(aItem.attributes?.accessGroup == "A.app")
        #expect(sharedItem.attributes?.accessGroup == "TEAM1.shared")
        let found = try home.keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id), caller: Callers.appB)
        #expect(found.first?.attributes?.accessGroup == "B.app")
    }

    @Test func anotherApplicationsItemsAreInvisible() throws {
        let (home, bItem, _, _) = try homeWithItems()
        let keychain = home.keychain
        let a = Callers.appA
        // Not found however A asks: by primary key, by scan, by listing, by id.
        expectKeychainError(.itemNotFound, "by primary key") {
            try keychain.copyMatching(genericQuery(service: "b-service", account: "b", returnData: true), caller: a)
        }
        expectKeychainError(.itemNotFound, "by scan") { try keychain.copyMatching(genericQuery(service: "b-service", returnData: true), caller: a) }
        expectKeychainError(.itemNotFound, "by id") {
            try keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: a)
        }
        let listed = try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: a)
        #expect(Set(listed.compactMap { $0.attributes?.service }) == ["a-service", "shared-service"])
        #expect(!listed.contains { $0.id == bItem.id })

        // Nor updated or deleted.
        var changes = ItemAttributes()
        changes.label = "hijacked"
        expectKeychainError(.itemNotFound) {
            try keychain.update(genericQuery(service: "b-service"), changes: changes, secret: secret("x"), caller: a)
        }
        expectKeychainError(.itemNotFound) {
            try keychain.update(ItemQuery(.genericPassword, id: bItem.id), changes: changes, secret: nil, caller: a)
        }
        expectKeychainError(.itemNotFound) { try keychain.delete(genericQuery(service: "b-service", account: "b"), caller: a) }
        expectKeychainError(.itemNotFound) { try keychain.delete(ItemQuery(.genericPassword, id: bItem.id), caller: a) }
        // A bulk delete by A removes only A's items.
        #expect(try keychain.delete(ItemQuery(.genericPassword, limit: .all), caller: a) == 2)

        // Naming B's group is a missing entitlement, for every operation.
        var inB = genericQuery(service: "b-service", account: "b", returnData: true)
        inB.attributes.accessGroup = "B.app"
        expectKeychainError(.missingEntitlement, "query") { try keychain.copyMatching(inB, caller: a) }
        expectKeychainError(.missingEntitlement, "update") { try keychain.update(inB, changes: changes, secret: nil, caller: a) }
        expectKeychainError(.missingEntitlement, "delete") { try keychain.delete(inB, caller: a) }
        expectKeychainError(.missingEntitlement, "add") {
            try keychain.add(
                .genericPassword, attributes: genericPassword(service: "x", account: "x", group: "B.app"), secret: secret("x"), caller: a)
        }
        expectKeychainError(.missingEntitlement, "add to another team's shared group") {
            try keychain.add(
                .genericPassword, attributes: genericPassword(service: "x", account: "x", group: "TEAM2.shared"), secret: secret("x"), caller: a)
        }

        // B's item is intact.
        let bView = try keychain.copyMatching(genericQuery(service: "b-service", account: "b", returnData: true), caller: Callers.appB)
        #expect(bView.first?.secret == secret("b-secret"))
        #expect(bView.first?.attributes?.label == nil)
    }

    @Test func anItemCannotBeMovedIntoAnotherApplicationsGroup() throws {
        let (home, _, aItem, _) = try homeWithItems()
        var changes = ItemAttributes()
        changes.accessGroup = "B.app"
        expectKeychainError(.missingEntitlement) {
            try home.keychain.update(ItemQuery(.genericPassword, id: aItem.id), changes: changes, secret: nil, caller: Callers.appA)
        }
        expectKeychainError(.itemNotFound) { try home.keychain.copyMatching(genericQuery(service: "a-service"), caller: Callers.appB) }
        // Moving it into its team's shared group is allowed and makes it visible to A2.
        changes.accessGroup = "TEAM1.shared"
        #expect(try home.keychain.update(ItemQuery(.genericPassword, id: aItem.id), changes: changes, secret: nil, caller: Callers.appA) == 1)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "a-service", returnData: true), caller: Callers.appA2).first?.secret
                == secret("a-secret"))
    }

    @Test func sameServiceAndAccountInTwoGroupsAreTwoItems() throws {
        let home = try KeychainHome()
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "x"), secret: secret("from-a"), caller: Callers.appA)
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "x"), secret: secret("from-b"), caller: Callers.appB)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "s", account: "x", limit: .all, returnData: true), caller: Callers.appA).map(
                \.secret) == [secret("from-a")])
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "s", account: "x", limit: .all, returnData: true), caller: Callers.appB).map(
                \.secret) == [secret("from-b")])
        // B deleting its item leaves A's.
        #expect(try home.keychain.delete(genericQuery(service: "s", account: "x"), caller: Callers.appB) == 1)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "s", account: "x", returnData: true), caller: Callers.appA).first?.secret
                == secret("from-a"))
    }

    @Test func teamSharedGroupIsSharedWithinTheTeamOnly() throws {
        let (home, _, aItem, sharedItem) = try homeWithItems()
        let keychain = home.keychain
        for caller in [Callers.appA, Callers.appA2] {
            let found = try keychain.copyMatching(genericQuery(service: "shared-service", account: "a", returnData: true), caller: caller)
            #expect(found.map(\.id) == [sharedItem.id])
            #expect(found.first?.secret == secret("shared-secret"))
        }
        var explicit = genericQuery(service: "shared-service", account: "a", returnData: true)
        explicit.attributes.accessGroup = "TEAM1.shared"
        #expect(try keychain.copyMatching(explicit, caller: Callers.appA2).first?.secret == secret("shared-secret"))
        // A2 does not see A's own group.
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(.genericPassword, id: aItem.id), caller: Callers.appA2) }
        #expect(try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA2).map(\.id) == [sharedItem.id])
        // B sees none of them.
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "shared-service", account: "a"), caller: Callers.appB) }
        expectKeychainError(.missingEntitlement) { try keychain.copyMatching(explicit, caller: Callers.appB) }

        // A2 may update the shared item; A sees the change; A2 may delete it.
        var changes = ItemAttributes()
        changes.label = "by A2"
        #expect(try keychain.update(explicit, changes: changes, secret: secret("rotated"), caller: Callers.appA2) == 1)
        let seenByA = try keychain.copyMatching(genericQuery(service: "shared-service", account: "a", returnData: true), caller: Callers.appA)
        #expect(seenByA.first?.secret == secret("rotated"))
        #expect(seenByA.first?.attributes?.label == "by A2")
        // A2 adding the same key in the shared group is a duplicate of A's item.
        expectKeychainError(.duplicateItem) {
            try keychain.add(
                .genericPassword, attributes: genericPassword(service: "shared-service", account: "a", group: "TEAM1.shared"), secret: secret("x"),
                caller: Callers.appA2)
        }
        #expect(try keychain.delete(explicit, caller: Callers.appA2) == 1)
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(explicit, caller: Callers.appA) }
    }

    @Test func keychainAccessListsEveryGroupButRevealsOthersSecretsOnlyWithThePasscode() throws {
        let (home, bItem, aItem, sharedItem) = try homeWithItems()
        let keychain = home.keychain
        let own = try keychain.add(
            .genericPassword, attributes: genericPassword(service: "cli-service", account: "c"), secret: secret("cli-secret"),
            caller: Callers.keychainAccess())
        #expect(own.attributes?.accessGroup == "tresor")

        // Listing (attributes only) shows every group's items, without a passcode.
        let listed = try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.keychainAccess())
        #expect(Set(listed.map(\.id)) == [bItem.id, aItem.id, sharedItem.id, own.id])
        #expect(Set(listed.compactMap { $0.attributes?.accessGroup }) == ["B.app", "A.app", "TEAM1.shared", "tresor"])
        #expect(listed.allSatisfy { $0.secret == nil })
        let byKey = try keychain.copyMatching(genericQuery(service: "b-service", account: "b"), caller: Callers.keychainAccess())
        #expect(byKey.map(\.id) == [bItem.id])

        // Another application's secret: refused without the passcode, and with a wrong one.
        for query in [
            ItemQuery(.genericPassword, id: bItem.id, returnData: true), genericQuery(service: "b-service", account: "b", returnData: true),
        ] {
            expectKeychainError(.presenceRequired, "no passcode") { try keychain.copyMatching(query, caller: Callers.keychainAccess()) }
            expectKeychainError(.authFailed, "wrong passcode") {
                try keychain.copyMatching(query, caller: Callers.keychainAccess(passcode: passcode("wrong passcode")))
            }
        }
        expectKeychainError(.presenceRequired, "a listing with data") {
            try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.keychainAccess())
        }
        // With the right passcode, the secret.
        let revealed = try keychain.copyMatching(
            ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: Callers.keychainAccess(passcode: home.passcode))
        #expect(revealed.first?.secret == secret("b-secret"))
        let all = try keychain.copyMatching(
            ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.keychainAccess(passcode: home.passcode))
        #expect(Set(all.compactMap(\.secret)) == [secret("b-secret"), secret("a-secret"), secret("shared-secret"), secret("cli-secret")])

        // Its own group's secrets need the user present too (KeychainAccessPresenceTests).
        expectKeychainError(.presenceRequired) {
            try keychain.copyMatching(ItemQuery(.genericPassword, id: own.id, returnData: true), caller: Callers.keychainAccess())
        }

        // Replacing another application's secret needs the passcode too.
        expectKeychainError(.presenceRequired) {
            try keychain.update(
                ItemQuery(.genericPassword, id: bItem.id), changes: ItemAttributes(), secret: secret("overwritten"), caller: Callers.keychainAccess())
        }
        #expect(
            try keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: Callers.appB).first?.secret
                == secret("b-secret"))
    }

    @Test func userPresenceItemsNeedThePasscodeEvenForTheirOwnApplication() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        var attributes = genericPassword(service: "bank", account: "ada")
        attributes.accessControl = .userPresence
        let item = try keychain.add(.genericPassword, attributes: attributes, secret: secret("pin 1234"), caller: Callers.appA)
        try keychain.add(
            .genericPassword, attributes: genericPassword(service: "plain", account: "ada"), secret: secret("plain"), caller: Callers.appA)

        // Attributes without the passcode: fine.
        let attributesOnly = try keychain.copyMatching(genericQuery(service: "bank", account: "ada"), caller: Callers.appA)
        #expect(attributesOnly.first?.attributes?.accessControl == .userPresence)
        // The secret: refused without it and with a wrong one, given with it.
        expectKeychainError(.presenceRequired) {
            try keychain.copyMatching(genericQuery(service: "bank", account: "ada", returnData: true), caller: Callers.appA)
        }
        expectKeychainError(.authFailed) {
            try keychain.copyMatching(
                ItemQuery(.genericPassword, id: item.id, returnData: true), caller: Callers.with(Callers.appA, passcode: passcode("wrong")))
        }
        let revealed = try keychain.copyMatching(
            genericQuery(service: "bank", account: "ada", returnData: true), caller: Callers.with(Callers.appA, passcode: home.passcode))
        #expect(revealed.first?.secret == secret("pin 1234"))
        // Other items of the same app still need nothing.
        #expect(try keychain.copyMatching(genericQuery(service: "plain", returnData: true), caller: Callers.appA).first?.secret == secret("plain"))
        // The keychain-access app needs it as well.
        expectKeychainError(.presenceRequired) {
            try keychain.copyMatching(ItemQuery(.genericPassword, id: item.id, returnData: true), caller: Callers.keychainAccess())
        }

        // Even while locked (afterFirstUnlock / always classes), the passcode is still required.
        var alwaysAttributes = genericPassword(service: "always-bank", account: "ada", accessible: .always)
        alwaysAttributes.accessControl = .userPresence
        try keychain.add(.genericPassword, attributes: alwaysAttributes, secret: secret("always pin"), caller: Callers.appA)
        try home.restart()
        expectKeychainError(.presenceRequired) {
            try home.keychain.copyMatching(genericQuery(service: "always-bank", returnData: true), caller: Callers.appA)
        }
        let lockedButPresent = try home.keychain.copyMatching(
            genericQuery(service: "always-bank", returnData: true), caller: Callers.with(Callers.appA, passcode: home.passcode))
        #expect(lockedButPresent.first?.secret == secret("always pin"))
        #expect(home.keybag.lockState == .lockedSinceStart, "checking the passcode does not unlock")

        // Replacing the secret also needs it.
        try home.unlock()
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(
                genericQuery(service: "bank", account: "ada"), changes: ItemAttributes(), secret: secret("stolen"), caller: Callers.appA)
        }
        try home.keychain.update(
            genericQuery(service: "bank", account: "ada"), changes: ItemAttributes(), secret: secret("new pin"),
            caller: Callers.with(Callers.appA, passcode: home.passcode))
        #expect(
            try home.keychain.copyMatching(
                genericQuery(service: "bank", returnData: true), caller: Callers.with(Callers.appA, passcode: home.passcode)
            ).first?.secret == secret("new pin"))
    }

    /// The keychain-access app must not launder another application's item into its own group
    /// (where it would read it without the passcode), nor push its items into an app's group.
    @Test func movingAnItemBetweenGroupsNeedsThePasscode() throws {
        let (home, bItem, _, _) = try homeWithItems()
        var toCLI = ItemAttributes()
        toCLI.accessGroup = "tresor"
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(ItemQuery(.genericPassword, id: bItem.id), changes: toCLI, secret: nil, caller: Callers.keychainAccess())
        }
        let stillB = try home.keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: Callers.appB)
        #expect(stillB.first?.attributes?.accessGroup == "B.app")
        #expect(stillB.first?.secret == secret("b-secret"))

        let cliItem = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "cli-service", account: "c"), secret: secret("c"), caller: Callers.keychainAccess()
        )
        var toB = ItemAttributes()
        toB.accessGroup = "B.app"
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(ItemQuery(.genericPassword, id: cliItem.id), changes: toB, secret: nil, caller: Callers.keychainAccess())
        }
        // With the passcode, the user consents.
        let passcode: Passcode = try #require(home.passcode)
        let consenting = Callers.keychainAccess(passcode: passcode)
        #expect(try home.keychain.update(ItemQuery(.genericPassword, id: bItem.id), changes: toCLI, secret: nil, caller: consenting) == 1)
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: consenting).first?.secret
                == secret("b-secret"))
    }

    /// Downgrading another application's item to `always` would let the device key alone open
    /// it: the keychain-access app needs the passcode for that too.
    @Test func changingAnotherApplicationsProtectionClassNeedsThePasscode() throws {
        let (home, bItem, _, _) = try homeWithItems()
        var downgrade = ItemAttributes()
        downgrade.accessible = .always
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(ItemQuery(.genericPassword, id: bItem.id), changes: downgrade, secret: nil, caller: Callers.keychainAccess())
        }
        #expect(
            try home.keychain.copyMatching(ItemQuery(.genericPassword, id: bItem.id), caller: Callers.appB).first?.attributes?.accessible
                == .whenUnlocked)
        // The application itself may change its own item's class.
        #expect(try home.keychain.update(ItemQuery(.genericPassword, id: bItem.id), changes: downgrade, secret: nil, caller: Callers.appB) == 1)
    }

    @Test func tooManyWrongPasscodesAreReportedAsThrottled() throws {
        let (home, bItem, _, _) = try homeWithItems()
        for attempt in 1...5 {
            do {
                _ = try home.keychain.copyMatching(
                    ItemQuery(.genericPassword, id: bItem.id, returnData: true),
                    caller: Callers.keychainAccess(passcode: passcode("wrong-\(attempt)")))
                Issue.record("a wrong passcode revealed a secret")
            } catch KeychainError.authFailed(_, let wait) {
                // The failure that starts the wait says how long it is, as unlock does.
                #expect(wait == (attempt == 5 ? 60 : nil), "attempt \(attempt)")
            }
        }
        do {
            _ = try home.keychain.copyMatching(
                ItemQuery(.genericPassword, id: bItem.id, returnData: true), caller: Callers.keychainAccess(passcode: home.passcode))
            Issue.record("a passcode was checked during the lockout")
        } catch KeychainError.throttled(_, let wait) {
            #expect((1...60).contains(wait))
        }
    }
}
