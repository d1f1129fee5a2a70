import Foundation
import Testing
import TresorKeybag
import TresorTestSupport

@testable import TresorKeychain

/// Protection classes × lock states (docs/API.md, "Protection classes and lock states"): a secret
/// is readable exactly when its class allows it, whoever asks.
@Suite struct KeychainProtectionClassTests {
    static let alwaysReadable: Set<ProtectionClass> = [.always, .alwaysThisDeviceOnly]
    static let afterFirstUnlock: Set<ProtectionClass> = [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]
    static let whenUnlocked: Set<ProtectionClass> = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]

    /// A home with a passcode and one generic password per protection class (service = the
    /// class name, secret = "secret-<class>"), added while unlocked.
    func homeWithOneItemPerClass() throws -> KeychainHome {
        let home = try KeychainHome()
        for protectionClass in ProtectionClass.allCases {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: protectionClass.rawValue, account: "a", accessible: protectionClass),
                secret: secret("secret-\(protectionClass.rawValue)"), caller: Callers.appA)
        }
        return home
    }

    /// Checks that exactly `readable` classes give their secret (by primary key, by scan and
    /// in a listing) and every other class is `interactionNotAllowed`.
    /// Classes in `absent` have no item (never added, or purged): `itemNotFound`.
    func expectReadable(
        _ readable: Set<ProtectionClass>, absent: Set<ProtectionClass> = [], in home: KeychainHome, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for protectionClass in ProtectionClass.allCases {
            if absent.contains(protectionClass) {
                expectKeychainError(.itemNotFound, "\(protectionClass) has no item", sourceLocation: sourceLocation) {
                    try home.keychain.copyMatching(
                        genericQuery(service: protectionClass.rawValue, account: "a", returnData: true), caller: Callers.appA)
                }
                continue
            }
            let byKey = genericQuery(service: protectionClass.rawValue, account: "a", returnData: true)
            var byLabelScan = genericQuery(service: protectionClass.rawValue, returnData: true)
            byLabelScan.attributes.accessible = protectionClass
            if readable.contains(protectionClass) {
                for query in [byKey, byLabelScan] {
                    let found = try home.keychain.copyMatching(query, caller: Callers.appA)
                    #expect(
                        found.map(\.secret) == [secret("secret-\(protectionClass.rawValue)")], "\(protectionClass)", sourceLocation: sourceLocation)
                    #expect(found.first?.attributes?.accessible == protectionClass, sourceLocation: sourceLocation)
                }
            } else {
                for query in [byKey, byLabelScan] {
                    expectKeychainError(.interactionNotAllowed, "\(protectionClass) in \(home.keybag.lockState)", sourceLocation: sourceLocation) {
                        try home.keychain.copyMatching(query, caller: Callers.appA)
                    }
                    var attributesOnly = query
                    attributesOnly.returnData = false
                    expectKeychainError(
                        .interactionNotAllowed, "attributes of \(protectionClass) in \(home.keybag.lockState)", sourceLocation: sourceLocation
                    ) {
                        try home.keychain.copyMatching(attributesOnly, caller: Callers.appA)
                    }
                }
            }
        }
        // A listing shows the available classes only.
        let listed = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.appA)
        #expect(Set(listed.compactMap { $0.attributes?.accessible }) == readable, sourceLocation: sourceLocation)
        #expect(listed.count == readable.count, sourceLocation: sourceLocation)
        for item in listed {
            #expect(item.secret == secret("secret-\(item.attributes?.accessible?.rawValue ?? "?")"), sourceLocation: sourceLocation)
        }
    }

    @Test func everyClassIsReadableWhileUnlocked() throws {
        let home = try homeWithOneItemPerClass()
        try expectReadable(Set(ProtectionClass.allCases), in: home)
    }

    @Test func lockedSinceStartUnlockedAndLockedAgain() throws {
        let home = try homeWithOneItemPerClass()
        try home.restart()
        #expect(home.keybag.lockState == .lockedSinceStart)
        try expectReadable(Self.alwaysReadable, in: home)
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.copyMatching(
                genericQuery(service: ProtectionClass.whenUnlocked.rawValue, account: "a", returnData: true), caller: Callers.appA)
        }

        try home.unlock()
        try expectReadable(Set(ProtectionClass.allCases), in: home)

        home.lock()
        #expect(home.keybag.lockState == .locked)
        try expectReadable(Self.alwaysReadable.union(Self.afterFirstUnlock), in: home)

        try home.unlock()
        try expectReadable(Set(ProtectionClass.allCases), in: home)
    }

    @Test func lockWithoutDroppingCachedKeysStillRefuses() throws {
        // The metadata keys were cached while unlocked; the lock alone must already refuse.
        let home = try homeWithOneItemPerClass()
        try expectReadable(Set(ProtectionClass.allCases), in: home)
        home.keybag.lock()
        try expectReadable(Self.alwaysReadable.union(Self.afterFirstUnlock), in: home)
    }

    @Test func nobodyReadsALockedClassNotEvenWithThePasscode() throws {
        let home = try homeWithOneItemPerClass()
        try home.restart()
        let callers = [
            Callers.with(Callers.appA, passcode: home.passcode),
            Callers.keychainAccess(passcode: home.passcode),
            Callers.keychainAccess(),
        ]
        for caller in callers {
            for protectionClass in Self.whenUnlocked.union(Self.afterFirstUnlock) {
                expectKeychainError(.interactionNotAllowed, "\(protectionClass), seesEveryGroup: \(caller.seesEveryGroup)") {
                    try home.keychain.copyMatching(genericQuery(service: protectionClass.rawValue, returnData: true), caller: caller)
                }
            }
            let listed = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: caller)
            #expect(Set(listed.compactMap { $0.attributes?.accessible }) == Self.alwaysReadable)
        }
    }

    @Test func lockedItemsCannotBeChangedOrAddedToALockedClass() throws {
        let home = try homeWithOneItemPerClass()
        try home.restart()
        var changes = ItemAttributes()
        changes.label = "changed while locked"
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.update(
                genericQuery(service: ProtectionClass.whenUnlocked.rawValue, account: "a"), changes: changes, secret: secret("x"),
                caller: Callers.appA)
        }
        // An always item cannot be moved into a class that is locked now.
        var reclass = ItemAttributes()
        reclass.accessible = .whenUnlocked
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.update(
                genericQuery(service: ProtectionClass.always.rawValue, account: "a"), changes: reclass, secret: nil, caller: Callers.appA)
        }
        // Adding to a locked class fails; adding to an always class works.
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "new", account: "a", accessible: .whenUnlocked), secret: secret("n"),
                caller: Callers.appA)
        }
        expectKeychainError(.interactionNotAllowed) {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "new", account: "a", accessible: .afterFirstUnlock), secret: secret("n"),
                caller: Callers.appA)
        }
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "new", account: "a", accessible: .alwaysThisDeviceOnly), secret: secret("n"),
            caller: Callers.appA)

        try home.unlock()
        let whenUnlocked = try home.keychain.copyMatching(
            genericQuery(service: ProtectionClass.whenUnlocked.rawValue, account: "a", returnData: true), caller: Callers.appA)
        #expect(whenUnlocked.first?.secret == secret("secret-whenUnlocked"))
        #expect(whenUnlocked.first?.attributes?.label == nil)
        let always = try home.keychain.copyMatching(genericQuery(service: ProtectionClass.always.rawValue, account: "a"), caller: Callers.appA)
        #expect(always.first?.attributes?.accessible == .always)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "new", account: "a", returnData: true), caller: Callers.appA).first?.secret
                == secret("n"))
    }

    @Test func removingThePasscodePurgesWhenPasscodeSetItems() throws {
        let home = try homeWithOneItemPerClass()
        let passcodeSet = ProtectionClass.whenPasscodeSetThisDeviceOnly
        try home.keybag.removePasscode(current: try #require(home.passcode))
        // Its class key is gone: the item can never be read again.
        do {
            _ = try home.keychain.copyMatching(genericQuery(service: passcodeSet.rawValue, account: "a", returnData: true), caller: Callers.appA)
            Issue.record("a whenPasscodeSetThisDeviceOnly item was readable after the passcode was removed")
        } catch {}
        #expect(try home.keychain.purge(passcodeSet) == 1)
        expectKeychainError(.itemNotFound) {
            try home.keychain.copyMatching(genericQuery(service: passcodeSet.rawValue, account: "a"), caller: Callers.appA)
        }
        expectKeychainError(.itemNotFound) {
            try home.keychain.copyMatching(genericQuery(service: passcodeSet.rawValue), caller: Callers.appA)
        }
        // Every other class survives passcode removal.
        let others = Set(ProtectionClass.allCases).subtracting([passcodeSet])
        try expectReadable(others, absent: [passcodeSet], in: home)
        try home.restart()
        #expect(home.keybag.lockState == .unlocked, "without a passcode the keybag opens unlocked")
        try expectReadable(others, absent: [passcodeSet], in: home)

        // No passcode: such items cannot be added any more, and nothing is stored.
        do {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "again", account: "a", accessible: passcodeSet), secret: secret("x"),
                caller: Callers.appA)
            Issue.record("added a whenPasscodeSetThisDeviceOnly item without a passcode")
        } catch {
            #expect(error is KeychainError)
        }
        expectKeychainError(.itemNotFound) { try home.keychain.copyMatching(genericQuery(service: "again"), caller: Callers.appA) }
    }

    @Test func passcodeSetItemsWorkAgainAfterANewPasscode() throws {
        let home = try homeWithOneItemPerClass()
        let passcodeSet = ProtectionClass.whenPasscodeSetThisDeviceOnly
        try home.keybag.removePasscode(current: try #require(home.passcode))
        #expect(try home.keychain.purge(passcodeSet) == 1)
        let newPasscode = passcode("a brand new passcode")
        try home.keybag.changePasscode(current: nil, to: newPasscode)
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "fresh", account: "a", accessible: passcodeSet),
            secret: secret("fresh"), caller: Callers.appA)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "fresh", returnData: true), caller: Callers.appA).first?.secret == secret("fresh"))
        try home.restart()
        try home.keybag.unlock(passcode: newPasscode)
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "fresh", returnData: true), caller: Callers.appA).first?.secret == secret("fresh"))
        #expect(
            try home.keychain.copyMatching(genericQuery(service: ProtectionClass.whenUnlocked.rawValue, returnData: true), caller: Callers.appA)
                .first?.secret == secret("secret-whenUnlocked"))
    }

    /// Apple's rule: an item that never leaves this device cannot be synchronizable — not added
    /// so, nor made so by an update; an item stays as it was.
    @Test func aThisDeviceOnlyItemCannotBeSynchronizable() throws {
        let home = try KeychainHome()
        for protectionClass in ProtectionClass.allCases where protectionClass.isThisDeviceOnly {
            var attributes = genericPassword(service: "sync-\(protectionClass.rawValue)", account: "a", accessible: protectionClass)
            attributes.synchronizable = true
            expectKeychainError(.param, "\(protectionClass)") {
                try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("x"), caller: Callers.appA)
            }
        }
        #expect(try home.rowCount(.genericPassword) == 0)

        var synced = genericPassword(service: "synced", account: "a")
        synced.synchronizable = true
        try home.keychain.add(.genericPassword, attributes: synced, secret: secret("s"), caller: Callers.appA)
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "local", account: "a", accessible: .afterFirstUnlockThisDeviceOnly),
            secret: secret("l"), caller: Callers.appA)
        var toThisDevice = ItemAttributes()
        toThisDevice.accessible = .whenUnlockedThisDeviceOnly
        var query = genericQuery(service: "synced")
        query.attributes.synchronizable = true
        expectKeychainError(.param) { try home.keychain.update(query, changes: toThisDevice, secret: nil, caller: Callers.appA) }
        var toSynced = ItemAttributes()
        toSynced.synchronizable = true
        expectKeychainError(.param) { try home.keychain.update(genericQuery(service: "local"), changes: toSynced, secret: nil, caller: Callers.appA) }
        #expect(try home.keychain.copyMatching(query, caller: Callers.appA).first?.attributes?.accessible == .whenUnlocked)
        #expect(try home.keychain.copyMatching(genericQuery(service: "local"), caller: Callers.appA).first?.attributes?.synchronizable == false)
    }

    @Test func whenPasscodeSetItemsNeedAPasscode() throws {
        let home = try KeychainHome(passcode: nil)
        #expect(home.keybag.status.isPasscodeSet == false)
        do {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "s", account: "a", accessible: .whenPasscodeSetThisDeviceOnly),
                secret: secret("x"), caller: Callers.appA)
            Issue.record("added a whenPasscodeSetThisDeviceOnly item without a passcode")
        } catch let error as KeychainError {
            #expect(error.kind == .param || error.kind == .interactionNotAllowed, "a clear error, got \(error)")
        }
        expectKeychainError(.itemNotFound) { try home.keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA) }
        #expect(try home.rowCount(.genericPassword) == 0)

        // Nor can an existing item be moved into that class.
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("x"), caller: Callers.appA)
        var changes = ItemAttributes()
        changes.accessible = .whenPasscodeSetThisDeviceOnly
        do {
            try home.keychain.update(genericQuery(service: "s"), changes: changes, secret: nil, caller: Callers.appA)
            Issue.record("moved an item into whenPasscodeSetThisDeviceOnly without a passcode")
        } catch {
            #expect(error is KeychainError)
        }
        let stored = try home.keychain.copyMatching(genericQuery(service: "s", returnData: true), caller: Callers.appA)
        #expect(stored.first?.attributes?.accessible == .whenUnlocked)
        #expect(stored.first?.secret == secret("x"))

        // Once a passcode is set, they can.
        try home.keybag.changePasscode(current: nil, to: passcode("now set"))
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "s2", account: "a", accessible: .whenPasscodeSetThisDeviceOnly),
            secret: secret("y"), caller: Callers.appA)
        #expect(try home.keychain.copyMatching(genericQuery(service: "s2", returnData: true), caller: Callers.appA).first?.secret == secret("y"))
    }

    @Test func noPasscodeMeansEveryClassButPasscodeSetIsAvailableAfterRestart() throws {
        let home = try KeychainHome(passcode: nil)
        let classes = ProtectionClass.allCases.filter { !$0.requiresPasscode }
        for protectionClass in classes {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: protectionClass.rawValue, account: "a", accessible: protectionClass),
                secret: secret("secret-\(protectionClass.rawValue)"), caller: Callers.appA)
        }
        try home.restart()
        try expectReadable(Set(classes), absent: [.whenPasscodeSetThisDeviceOnly], in: home)
    }

    @Test func downgradingTheClearProtectionClassColumnRevealsNothing() throws {
        // `pdmn` is the one attribute stored in the clear. An attacker who rewrites it from
        // whenUnlocked to always must not get the secret while the keybag is locked.
        let home = try homeWithOneItemPerClass()
        let target = try home.keychain.copyMatching(genericQuery(service: ProtectionClass.whenUnlocked.rawValue, account: "a"), caller: Callers.appA)[
            0]
        try home.setColumn(.genericPassword, id: target.id, column: "pdmn", to: ProtectionClass.always.rawValue)
        try home.restart()
        for query in [
            ItemQuery(.genericPassword, id: target.id, returnData: true),
            genericQuery(service: ProtectionClass.whenUnlocked.rawValue, account: "a", returnData: true),
            genericQuery(service: ProtectionClass.whenUnlocked.rawValue, returnData: true),
        ] {
            do {
                let found = try home.keychain.copyMatching(query, caller: Callers.appA)
                Issue.record("a locked item was returned after its class column was rewritten: \(found.map(\.id))")
            } catch {
                #expect(error is KeychainError)
            }
        }
        // The always items are unaffected.
        let listed = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.appA)
        #expect(Set(listed.compactMap { $0.attributes?.accessible }) == Self.alwaysReadable)
        #expect(!listed.contains { $0.secret == secret("secret-whenUnlocked") })
    }

    /// Without a passcode nothing can prove presence: an item can neither be added with
    /// `userPresence` nor given it later (it would never open again).
    @Test func userPresenceNeedsAPasscodeOnAddAndOnUpdate() throws {
        let home = try KeychainHome(passcode: nil)
        var attributes = genericPassword(service: "s", account: "a")
        attributes.accessControl = .userPresence
        expectKeychainError(.param) { try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("x"), caller: Callers.appA) }
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("x"), caller: Callers.appA)
        var changes = ItemAttributes()
        changes.accessControl = .userPresence
        expectKeychainError(.param) { try home.keychain.update(genericQuery(service: "s"), changes: changes, secret: nil, caller: Callers.appA) }
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "s", account: "a", returnData: true), caller: Callers.appA).first?.secret
                == secret("x"))
    }
}
