import Foundation
import Testing
import TresorKeybag

@testable import TresorKeychain

/// Add / copy matching / update / delete per item class, primary keys and uniqueness, the
/// round trip of every attribute, and query semantics (docs/API.md, "Keychain items").
@Suite struct KeychainItemTests {
    // MARK: Sample attributes

    static func internetPassword(server: String = "example.com", account: String = "ada") -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.server = server
        attributes.protocol = "https"
        attributes.port = 443
        attributes.path = "/login"
        attributes.account = account
        attributes.authenticationType = "form"
        attributes.securityDomain = "realm"
        return attributes
    }

    static func key(tag: String = "com.example.key") -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.keyClass = .private
        attributes.applicationLabel = Data([0xA1, 0xB2, 0xC3, 0xD4])
        attributes.applicationTag = Data(tag.utf8)
        attributes.keyType = "ec-p256"
        attributes.keySizeInBits = 256
        attributes.effectiveKeySize = 256
        return attributes
    }

    // MARK: Lifecycle per class

    /// Adds two items, finds them in every return mode, updates one (attributes and secret),
    /// deletes it, and checks the other never changed.
    func lifecycle(_ itemClass: ItemClass, first: ItemAttributes, second: ItemAttributes) throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let caller = Callers.appA
        let added = try keychain.add(itemClass, attributes: first, secret: secret("first-secret"), caller: caller)
        let other = try keychain.add(itemClass, attributes: second, secret: secret("second-secret"), caller: caller)
        #expect(added.id != other.id)
        #expect(added.secret == nil)

        // By its primary key (blind index), data and attributes.
        let found = try keychain.copyMatching(
            ItemQuery(itemClass, attributes: first, returnData: true, returnAttributes: true), caller: caller)
        #expect(found.count == 1)
        #expect(found.first?.id == added.id)
        #expect(found.first?.itemClass == itemClass)
        #expect(found.first?.secret == secret("first-secret"))
        #expect(found.first?.attributes?.accessGroup == "A.app")
        #expect(found.first?.attributes?.accessible == .whenUnlocked)
        #expect(found.first?.attributes?.synchronizable == false)

        // Data only, attributes only, neither.
        let dataOnly = try keychain.copyMatching(
            ItemQuery(itemClass, attributes: first, returnData: true, returnAttributes: false), caller: caller)
        #expect(dataOnly.count == 1)
        #expect(dataOnly.first?.attributes == nil)
        #expect(dataOnly.first?.secret == secret("first-secret"))
        let attributesOnly = try keychain.copyMatching(ItemQuery(itemClass, attributes: first), caller: caller)
        #expect(attributesOnly.first?.secret == nil)
        #expect(withoutDates(attributesOnly.first?.attributes) == withoutDates(found.first?.attributes))
        let neither = try keychain.copyMatching(
            ItemQuery(itemClass, attributes: first, returnData: false, returnAttributes: false), caller: caller)
        #expect(neither.count == 1)
        #expect(neither.first?.id == added.id)
        #expect(neither.first?.attributes == nil && neither.first?.secret == nil)

        // Limit one and all over the class.
        let all = try keychain.copyMatching(ItemQuery(itemClass, limit: .all, returnData: true), caller: caller)
        #expect(Set(all.map(\.id)) == [added.id, other.id])
        #expect(Set(all.compactMap(\.secret)) == [secret("first-secret"), secret("second-secret")])
        let one = try keychain.copyMatching(ItemQuery(itemClass, limit: .one), caller: caller)
        #expect(one.count == 1)

        // By id.
        let byID = try keychain.copyMatching(ItemQuery(itemClass, id: other.id, returnData: true), caller: caller)
        #expect(byID.map(\.id) == [other.id])
        #expect(byID.first?.secret == secret("second-secret"))

        // Update the attributes and the secret of the first item only.
        var changes = ItemAttributes()
        changes.label = "changed label"
        changes.comment = "changed comment"
        let updated = try keychain.update(ItemQuery(itemClass, attributes: first), changes: changes, secret: secret("new-secret"), caller: caller)
        #expect(updated == 1)
        var changedQuery = ItemQuery(itemClass, returnData: true)
        changedQuery.attributes.label = "changed label"
        let afterUpdate = try keychain.copyMatching(changedQuery, caller: caller)
        #expect(afterUpdate.map(\.id) == [added.id])
        #expect(afterUpdate.first?.secret == secret("new-secret"))
        #expect(afterUpdate.first?.attributes?.comment == "changed comment")
        // The attributes not named in the update are kept.
        var expected = try #require(withoutDates(found.first?.attributes))
        expected.label = "changed label"
        expected.comment = "changed comment"
        #expect(withoutDates(afterUpdate.first?.attributes) == expected)
        let untouched = try keychain.copyMatching(ItemQuery(itemClass, id: other.id, returnData: true), caller: caller)
        #expect(untouched.first?.secret == secret("second-secret"))
        #expect(untouched.first?.attributes?.label == second.label)

        // Delete the first item.
        #expect(try keychain.delete(ItemQuery(itemClass, attributes: first), caller: caller) == 1)
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(itemClass, attributes: first), caller: caller) }
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(itemClass, id: added.id), caller: caller) }
        expectKeychainError(.itemNotFound) { try keychain.delete(ItemQuery(itemClass, attributes: first), caller: caller) }
        let remaining = try keychain.copyMatching(ItemQuery(itemClass, limit: .all, returnData: true), caller: caller)
        #expect(remaining.map(\.id) == [other.id])
        #expect(remaining.first?.secret == secret("second-secret"))
        #expect(try home.rowCount(itemClass) == 1)
    }

    @Test func genericPasswordAddFindUpdateDelete() throws {
        var second = genericPassword(service: "example.org", account: "bob")
        second.label = "second"
        try lifecycle(.genericPassword, first: genericPassword(service: "example.com", account: "ada"), second: second)
    }

    @Test func internetPasswordAddFindUpdateDelete() throws {
        var second = Self.internetPassword(server: "example.org", account: "bob")
        second.label = "second"
        try lifecycle(.internetPassword, first: Self.internetPassword(), second: second)
    }

    @Test func keyAddFindUpdateDelete() throws {
        var second = Self.key(tag: "com.example.other")
        second.label = "second"
        try lifecycle(.key, first: Self.key(), second: second)
    }

    @Test func certificateAddFindUpdateDelete() throws {
        let der = try certificateDER("ISRG_Root_X1")
        let otherDER = try certificateDER("ISRG_Root_X2")
        try #require(certificateFillAccepts(der) && certificateFillAccepts(otherDER), "the certificate attributes are read from both roots' DER")
        let home = try KeychainHome()
        let keychain = home.keychain
        let caller = Callers.appA
        var attributes = ItemAttributes()
        attributes.label = "ISRG Root X1"
        let added = try keychain.add(.certificate, attributes: attributes, secret: der, caller: caller)
        var otherAttributes = ItemAttributes()
        otherAttributes.label = "ISRG Root X2"
        let other = try keychain.add(.certificate, attributes: otherAttributes, secret: otherDER, caller: caller)
        #expect(added.id != other.id)

        // The same certificate twice is a duplicate, whatever its label or protection class.
        var again = ItemAttributes()
        again.label = "another label"
        again.accessible = .always
        expectKeychainError(.duplicateItem) { try keychain.add(.certificate, attributes: again, secret: der, caller: caller) }

        var query = ItemQuery(.certificate, returnData: true)
        query.attributes.label = "ISRG Root X1"
        let found = try keychain.copyMatching(query, caller: caller)
        #expect(found.map(\.id) == [added.id])
        #expect(found.first?.secret == der)
        let all = try keychain.copyMatching(ItemQuery(.certificate, limit: .all), caller: caller)
        #expect(Set(all.map(\.id)) == [added.id, other.id])

        // Found again by the attributes the keychain read from the DER (its primary key).
        let stored = try #require(found.first?.attributes)
        var byKey = ItemQuery(.certificate, returnData: true)
        byKey.attributes.certificateType = stored.certificateType
        byKey.attributes.issuer = stored.issuer
        byKey.attributes.serialNumber = stored.serialNumber
        #expect(try keychain.copyMatching(byKey, caller: caller).map(\.id) == [added.id])

        // A label may change; the DER and what was read from it may not.
        var changes = ItemAttributes()
        changes.label = "renamed"
        #expect(try keychain.update(ItemQuery(.certificate, id: added.id), changes: changes, secret: nil, caller: caller) == 1)
        #expect(try keychain.copyMatching(ItemQuery(.certificate, id: added.id), caller: caller).first?.attributes?.label == "renamed")
        expectKeychainError(.param) {
            try keychain.update(ItemQuery(.certificate, id: added.id), changes: ItemAttributes(), secret: otherDER, caller: caller)
        }
        #expect(try keychain.copyMatching(ItemQuery(.certificate, id: added.id, returnData: true), caller: caller).first?.secret == der)

        #expect(try keychain.delete(ItemQuery(.certificate, id: added.id), caller: caller) == 1)
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(.certificate, id: added.id), caller: caller) }
        #expect(try keychain.copyMatching(ItemQuery(.certificate, limit: .all), caller: caller).map(\.id) == [other.id])
    }

    // MARK: Every attribute round-trips

    /// Adds `attributes`, then checks the add result, a query, and a query after reopening
    /// the keychain all return exactly them, plus the two dates the keychain set.
    func roundTrip(_ itemClass: ItemClass, _ attributes: ItemAttributes, secret value: Data, caller: Caller, query: ItemQuery) throws {
        let home = try KeychainHome()
        let before = Date()
        let added = try home.keychain.add(itemClass, attributes: attributes, secret: value, caller: caller)
        let after = Date()
        #expect(withoutDates(added.attributes) == attributes)
        let created = try #require(added.attributes?.creationDate)
        #expect(created >= before.addingTimeInterval(-0.001) && created <= after.addingTimeInterval(0.001))
        #expect(sameInstant(added.attributes?.modificationDate, created))

        for reopened in [false, true] {
            if reopened { try home.reopenKeychain() }
            let found = try home.keychain.copyMatching(query, caller: caller)
            #expect(found.count == 1)
            let stored = try #require(found.first?.attributes)
            #expect(withoutDates(stored) == attributes, "reopened: \(reopened)")
            #expect(sameInstant(stored.creationDate, created))
            #expect(sameInstant(stored.modificationDate, created))
            if attributes.accessControl == nil {
                let withData = try home.keychain.copyMatching(
                    ItemQuery(itemClass, id: added.id, returnData: true), caller: caller)
                #expect(withData.first?.secret == value)
            }
        }
    }

    static let customAttributes = [
        "xdg:schema": "org.freedesktop.Secret.Generic", "user": "ada", "empty": "",
        "unicode ключ": "значение ☕️", "with \"quotes\"": "a\nb\tc\u{0}d",
    ]

    @Test func everyGenericPasswordAttributeRoundTrips() throws {
        var attributes = ItemAttributes()
        attributes.accessGroup = "TEAM1.shared"
        attributes.accessible = .afterFirstUnlock
        attributes.accessControl = .userPresence
        attributes.synchronizable = true
        attributes.label = "Café ☕️ — 日本語 label"
        attributes.description = "application password"
        attributes.comment = "a comment\nwith two lines"
        attributes.creator = 0x7472_736F
        attributes.type = 0xFFFF_FFFF
        attributes.custom = Self.customAttributes
        attributes.account = "ada@example.com"
        attributes.service = "com.example.service"
        attributes.generic = Data([0, 1, 2, 0x7F, 0x80, 0xFE, 0xFF])
        var query = ItemQuery(.genericPassword)
        query.attributes.service = "com.example.service"
        query.attributes.account = "ada@example.com"
        query.attributes.synchronizable = true
        try roundTrip(.genericPassword, attributes, secret: secret("s3cr3t"), caller: Callers.appA, query: query)
    }

    @Test func everyInternetPasswordAttributeRoundTrips() throws {
        var attributes = Self.internetPassword(server: "login.example.com", account: "ada")
        attributes.port = 65535
        attributes.accessGroup = "A.app"
        attributes.accessible = .always
        attributes.synchronizable = false
        attributes.label = "login.example.com (ada)"
        attributes.description = "Web form password"
        attributes.comment = "comment"
        attributes.creator = 1
        attributes.type = 0
        attributes.custom = Self.customAttributes
        var query = ItemQuery(.internetPassword)
        query.attributes.server = "login.example.com"
        query.attributes.port = 65535
        try roundTrip(.internetPassword, attributes, secret: secret("hunter2"), caller: Callers.appA, query: query)
    }

    @Test func everyKeyAttributeRoundTrips() throws {
        var attributes = Self.key()
        attributes.keyClass = .symmetric
        attributes.keySizeInBits = 4096
        attributes.effectiveKeySize = 128
        attributes.accessGroup = "A.app"
        attributes.accessible = .whenUnlockedThisDeviceOnly
        attributes.synchronizable = false
        attributes.label = "signing key"
        attributes.description = "private key"
        attributes.comment = "comment"
        attributes.creator = 42
        attributes.type = 7
        attributes.custom = Self.customAttributes
        var query = ItemQuery(.key)
        query.attributes.applicationTag = attributes.applicationTag
        try roundTrip(.key, attributes, secret: Data((0..<32).map { UInt8($0) }), caller: Callers.appA, query: query)
    }

    @Test func everyCertificateAttributeRoundTrips() throws {
        let der = try certificateDER("ISRG_Root_X1")
        try #require(certificateFillAccepts(der), "the certificate attributes are read from the root's DER")
        let home = try KeychainHome()
        var attributes = ItemAttributes()
        attributes.accessGroup = "A.app"
        attributes.accessible = .afterFirstUnlock
        attributes.synchronizable = false
        attributes.label = "ISRG Root X1"
        attributes.description = "certificate"
        attributes.comment = "comment"
        attributes.creator = 3
        attributes.type = 4
        attributes.custom = Self.customAttributes
        let added = try home.keychain.add(.certificate, attributes: attributes, secret: der, caller: Callers.appA)
        let returned = try #require(added.attributes)
        // What the caller set is kept; what the certificate says is added.
        for path in [\ItemAttributes.label, \.description, \.comment, \.accessGroup] as [KeyPath<ItemAttributes, String?>] {
            #expect(returned[keyPath: path] == attributes[keyPath: path])
        }
        #expect(returned.custom == attributes.custom)
        #expect(returned.creator == 3 && returned.type == 4 && returned.accessible == .afterFirstUnlock)
        #expect(returned.creationDate != nil && returned.modificationDate != nil)
        #expect(returned.issuer != nil && returned.serialNumber != nil && returned.certificateType != nil, "read from the DER")
        try home.reopenKeychain()
        let found = try home.keychain.copyMatching(ItemQuery(.certificate, id: added.id, returnData: true), caller: Callers.appA)
        #expect(withoutDates(found.first?.attributes) == withoutDates(returned))
        #expect(sameInstant(found.first?.attributes?.creationDate, returned.creationDate))
        #expect(found.first?.secret == der)
    }

    @Test func datesAreSetByTheKeychain() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        var given = genericPassword(service: "s", account: "a")
        given.creationDate = Date(timeIntervalSince1970: 0)
        expectKeychainError(.param, "creationDate is the keychain's") {
            try keychain.add(.genericPassword, attributes: given, secret: secret("x"), caller: Callers.appA)
        }
        given.creationDate = nil
        given.modificationDate = Date(timeIntervalSince1970: 0)
        expectKeychainError(.param, "modificationDate is the keychain's") {
            try keychain.add(.genericPassword, attributes: given, secret: secret("x"), caller: Callers.appA)
        }
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA) }

        let added = try keychain.add(
            .genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("x"), caller: Callers.appA)
        let created = try #require(added.attributes?.creationDate)
        var changes = ItemAttributes()
        changes.modificationDate = Date(timeIntervalSince1970: 0)
        expectKeychainError(.param) { try keychain.update(genericQuery(service: "s"), changes: changes, secret: nil, caller: Callers.appA) }

        Thread.sleep(forTimeInterval: 0.02)
        changes = ItemAttributes()
        changes.label = "renamed"
        try keychain.update(genericQuery(service: "s"), changes: changes, secret: nil, caller: Callers.appA)
        let afterLabel = try #require(try keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA).first?.attributes)
        #expect(sameInstant(afterLabel.creationDate, created), "the creation date never changes")
        let firstModification = try #require(afterLabel.modificationDate)
        #expect(firstModification.timeIntervalSince(created) >= 0.015, "the modification date moves on update")

        Thread.sleep(forTimeInterval: 0.02)
        try keychain.update(genericQuery(service: "s"), changes: ItemAttributes(), secret: secret("y"), caller: Callers.appA)
        let afterSecret = try #require(try keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA).first?.attributes)
        #expect(sameInstant(afterSecret.creationDate, created))
        #expect(try #require(afterSecret.modificationDate).timeIntervalSince(firstModification) >= 0.015, "a new secret is a modification")
    }

    // MARK: Uniqueness

    @Test func duplicatePrimaryKeyIsRefusedInEveryClass() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let samples: [(ItemClass, ItemAttributes)] = [
            (.genericPassword, genericPassword(service: "svc", account: "acct")),
            (.internetPassword, Self.internetPassword()),
            (.key, Self.key()),
        ]
        for (itemClass, attributes) in samples {
            try keychain.add(itemClass, attributes: attributes, secret: secret("original"), caller: Callers.appA)
            // Identical.
            expectKeychainError(.duplicateItem, "\(itemClass)") {
                try keychain.add(itemClass, attributes: attributes, secret: secret("other"), caller: Callers.appA)
            }
            // Only non-key attributes differ.
            var relabelled = attributes
            relabelled.label = "another label"
            relabelled.comment = "another comment"
            relabelled.custom = ["k": "v"]
            expectKeychainError(.duplicateItem, "\(itemClass) differing in label") {
                try keychain.add(itemClass, attributes: relabelled, secret: secret("other"), caller: Callers.appA)
            }
            // Only the protection class differs (in either direction).
            for accessible in [ProtectionClass.always, .afterFirstUnlockThisDeviceOnly, .whenUnlocked] {
                var reclassed = attributes
                reclassed.accessible = accessible
                expectKeychainError(.duplicateItem, "\(itemClass) differing in accessible: \(accessible)") {
                    try keychain.add(itemClass, attributes: reclassed, secret: secret("other"), caller: Callers.appA)
                }
            }
            // The default group named explicitly is the same group.
            var explicitGroup = attributes
            explicitGroup.accessGroup = "A.app"
            expectKeychainError(.duplicateItem, "\(itemClass) naming its default group") {
                try keychain.add(itemClass, attributes: explicitGroup, secret: secret("other"), caller: Callers.appA)
            }
            // Never silently overwritten.
            let stored = try keychain.copyMatching(ItemQuery(itemClass, limit: .all, returnData: true), caller: Callers.appA)
            #expect(stored.count == 1, "\(itemClass)")
            #expect(stored.first?.secret == secret("original"), "\(itemClass)")
            #expect(stored.first?.attributes?.label == nil)
            #expect(stored.first?.attributes?.accessible == .whenUnlocked)
        }
    }

    @Test func itemsDifferingInOnePrimaryKeyAttributeCoexist() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let caller = Callers.appA

        let generic = genericPassword(service: "svc", account: "acct")
        var genericVariants: [ItemAttributes] = [generic]
        var v = generic; v.service = "svc2"; genericVariants.append(v)
        v = generic; v.account = "acct2"; genericVariants.append(v)
        v = generic; v.account = nil; genericVariants.append(v)
        v = generic; v.accessGroup = "TEAM1.shared"; genericVariants.append(v)
        v = generic; v.synchronizable = true; genericVariants.append(v)
        // Canonical tuples: ("ab", "c") and ("a", "bc") are different keys.
        genericVariants.append(genericPassword(service: "ab", account: "c"))
        genericVariants.append(genericPassword(service: "a", account: "bc"))

        let internet = Self.internetPassword()
        var internetVariants: [ItemAttributes] = [internet]
        var i = internet; i.server = "other.example.com"; internetVariants.append(i)
        i = internet; i.protocol = "http"; internetVariants.append(i)
        i = internet; i.port = 8443; internetVariants.append(i)
        i = internet; i.port = nil; internetVariants.append(i)
        i = internet; i.path = "/other"; internetVariants.append(i)
        i = internet; i.account = "bob"; internetVariants.append(i)
        i = internet; i.authenticationType = "http-basic"; internetVariants.append(i)
        i = internet; i.securityDomain = "other realm"; internetVariants.append(i)
        i = internet; i.accessGroup = "TEAM1.shared"; internetVariants.append(i)
        i = internet; i.synchronizable = true; internetVariants.append(i)

        let key = Self.key()
        var keyVariants: [ItemAttributes] = [key]
        var k = key; k.keyClass = .public; keyVariants.append(k)
        k = key; k.applicationLabel = Data([1]); keyVariants.append(k)
        k = key; k.applicationTag = Data("other".utf8); keyVariants.append(k)
        k = key; k.keyType = "rsa"; keyVariants.append(k)
        k = key; k.keySizeInBits = 384; keyVariants.append(k)
        k = key; k.effectiveKeySize = 192; keyVariants.append(k)
        k = key; k.accessGroup = "TEAM1.shared"; keyVariants.append(k)
        k = key; k.synchronizable = true; keyVariants.append(k)

        for (itemClass, variants) in [(ItemClass.genericPassword, genericVariants), (.internetPassword, internetVariants), (.key, keyVariants)] {
            var ids: [String] = []
            for (index, attributes) in variants.enumerated() {
                do {
                    ids.append(try keychain.add(itemClass, attributes: attributes, secret: secret("\(itemClass)-\(index)"), caller: caller).id)
                } catch {
                    Issue.record("\(itemClass) variant \(index) was refused: \(error)")
                }
            }
            #expect(Set(ids).count == variants.count)
            // Each variant, queried with its whole primary key (group and synchronizable made
            // explicit), finds exactly its own item with its own secret. (A variant leaving a key
            // attribute unset is a wildcard query, so it finds its own item among others.)
            for (index, attributes) in variants.enumerated() {
                var query = ItemQuery(itemClass, attributes: attributes, limit: .all, returnData: true)
                query.attributes.accessGroup = attributes.accessGroup ?? "A.app"
                query.attributes.synchronizable = attributes.synchronizable ?? false
                let found = try? keychain.copyMatching(query, caller: caller)
                let own = secret("\(itemClass)-\(index)")
                let wildcard =
                    (itemClass == .genericPassword && attributes.account == nil) || (itemClass == .internetPassword && attributes.port == nil)
                if wildcard {
                    #expect(found?.contains { $0.secret == own } == true, "\(itemClass) variant \(index)")
                } else {
                    #expect(found?.map(\.secret) == [own], "\(itemClass) variant \(index)")
                }
                if index < ids.count {
                    var byIDQuery = ItemQuery(itemClass, id: ids[index], returnData: true)
                    byIDQuery.attributes.synchronizable = attributes.synchronizable
                    let byID = try? keychain.copyMatching(byIDQuery, caller: caller)
                    #expect(byID?.first?.secret == own, "\(itemClass) variant \(index) by id")
                }
            }
        }
    }

    @Test func updateThatWouldDuplicateChangesNothing() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        try keychain.add(.genericPassword, attributes: genericPassword(service: "one", account: "shared"), secret: secret("1"), caller: Callers.appA)
        try keychain.add(.genericPassword, attributes: genericPassword(service: "two", account: "shared"), secret: secret("2"), caller: Callers.appA)
        try keychain.add(.genericPassword, attributes: genericPassword(service: "three", account: "x"), secret: secret("3"), caller: Callers.appA)

        // Renaming "one" to "three"/"x" collides.
        var changes = ItemAttributes()
        changes.service = "three"
        changes.account = "x"
        expectKeychainError(.duplicateItem) {
            try keychain.update(genericQuery(service: "one"), changes: changes, secret: nil, caller: Callers.appA)
        }
        // Both "shared" items renamed to the same service: the second collides with the first,
        // and the first change is rolled back too (all or nothing).
        var query = ItemQuery(.genericPassword, limit: .all)
        query.attributes.account = "shared"
        changes = ItemAttributes()
        changes.service = "same"
        expectKeychainError(.duplicateItem) {
            try keychain.update(query, changes: changes, secret: secret("changed"), caller: Callers.appA)
        }
        let all = try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all, returnData: true), caller: Callers.appA)
        #expect(Set(all.compactMap { $0.attributes?.service }) == ["one", "two", "three"])
        #expect(Set(all.compactMap(\.secret)) == [secret("1"), secret("2"), secret("3")])
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "same"), caller: Callers.appA) }
    }

    @Test func updateCanChangeThePrimaryKeyAndTheProtectionClass() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        try keychain.add(.genericPassword, attributes: genericPassword(service: "old", account: "a"), secret: secret("v"), caller: Callers.appA)
        var changes = ItemAttributes()
        changes.service = "new"
        changes.accessible = .always
        #expect(try keychain.update(genericQuery(service: "old", account: "a"), changes: changes, secret: nil, caller: Callers.appA) == 1)
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "old", account: "a"), caller: Callers.appA) }
        let found = try keychain.copyMatching(genericQuery(service: "new", account: "a", returnData: true), caller: Callers.appA)
        #expect(found.first?.secret == secret("v"))
        #expect(found.first?.attributes?.accessible == .always)
        // The old primary key is free again.
        try keychain.add(.genericPassword, attributes: genericPassword(service: "old", account: "a"), secret: secret("w"), caller: Callers.appA)
        // Now `always`: readable after a restart, before any unlock.
        try home.restart()
        #expect(home.keybag.lockState == .lockedSinceStart)
        let afterRestart = try home.keychain.copyMatching(genericQuery(service: "new", account: "a", returnData: true), caller: Callers.appA)
        #expect(afterRestart.first?.secret == secret("v"))
    }

    @Test func updateAndDeleteOfNothingIsItemNotFound() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        try keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("v"), caller: Callers.appA)
        var changes = ItemAttributes()
        changes.label = "x"
        expectKeychainError(.itemNotFound) { try keychain.update(genericQuery(service: "nope"), changes: changes, secret: nil, caller: Callers.appA) }
        expectKeychainError(.itemNotFound) { try keychain.delete(genericQuery(service: "nope"), caller: Callers.appA) }
        expectKeychainError(.itemNotFound) { try keychain.delete(ItemQuery(.internetPassword), caller: Callers.appA) }
        #expect(try keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA).first?.attributes?.label == nil)
    }

    @Test func deleteAndUpdateAffectEveryMatch() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        for account in ["a", "b", "c"] {
            try keychain.add(
                .genericPassword, attributes: genericPassword(service: "multi", account: account), secret: secret(account), caller: Callers.appA)
        }
        try keychain.add(.genericPassword, attributes: genericPassword(service: "keep", account: "a"), secret: secret("keep"), caller: Callers.appA)
        var changes = ItemAttributes()
        changes.label = "bulk"
        #expect(
            try keychain.update(genericQuery(service: "multi", limit: .one), changes: changes, secret: nil, caller: Callers.appA) == 3,
            "update changes every match whatever the limit")
        var byLabel = ItemQuery(.genericPassword, limit: .all)
        byLabel.attributes.label = "bulk"
        #expect(try keychain.copyMatching(byLabel, caller: Callers.appA).count == 3)
        #expect(
            try keychain.delete(genericQuery(service: "multi", limit: .one), caller: Callers.appA) == 3,
            "delete removes every match whatever the limit")
        #expect(try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA).count == 1)
    }

    @Test func itemsSurviveReopeningTheKeychainAndRestartingTheKeybag() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("v"), caller: Callers.appA)
        try home.keychain.add(.internetPassword, attributes: Self.internetPassword(), secret: secret("w"), caller: Callers.appA)
        try home.restart()
        try home.unlock()
        #expect(
            try home.keychain.copyMatching(genericQuery(service: "s", account: "a", returnData: true), caller: Callers.appA).first?.secret
                == secret("v"))
        #expect(
            try home.keychain.copyMatching(ItemQuery(.internetPassword, attributes: Self.internetPassword(), returnData: true), caller: Callers.appA)
                .first?.secret == secret("w"))
        // The blind index still says "duplicate" after the restart.
        expectKeychainError(.duplicateItem) {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("x"), caller: Callers.appA)
        }
    }

    @Test func itemsAddedAfterARefusedAddSurviveAReopen() throws {
        // A refused add (duplicate) is rolled back entirely — including anything it prepared
        // for its (item class, protection class) — so items added next still open after a reopen.
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "x", account: "a"), secret: secret("x"), caller: Callers.appA)
        expectKeychainError(.duplicateItem) {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "x", account: "a", accessible: .always), secret: secret("dup"),
                caller: Callers.appA)
        }
        try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "y", account: "a", accessible: .always), secret: secret("y"), caller: Callers.appA)
        #expect(try home.keychain.copyMatching(genericQuery(service: "y", returnData: true), caller: Callers.appA).first?.secret == secret("y"))

        try home.reopenKeychain()
        let afterReopen = try home.keychain.copyMatching(genericQuery(service: "y", account: "a", returnData: true), caller: Callers.appA)
        #expect(afterReopen.first?.secret == secret("y"))
        try home.restart()
        let afterRestart = try home.keychain.copyMatching(genericQuery(service: "y", account: "a", returnData: true), caller: Callers.appA)
        #expect(afterRestart.first?.secret == secret("y"))
    }

    @Test func itemsChangedAfterARefusedUpdateSurviveAReopen() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "x", account: "a"), secret: secret("x"), caller: Callers.appA)
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "y", account: "a"), secret: secret("y"), caller: Callers.appA)
        // Moving x into afterFirstUnlock under y's primary key: refused.
        var changes = ItemAttributes()
        changes.service = "y"
        changes.accessible = .afterFirstUnlock
        expectKeychainError(.duplicateItem) {
            try home.keychain.update(genericQuery(service: "x", account: "a"), changes: changes, secret: nil, caller: Callers.appA)
        }
        // Moving x into afterFirstUnlock alone: fine, and it must survive a reopen.
        changes = ItemAttributes()
        changes.accessible = .afterFirstUnlock
        #expect(try home.keychain.update(genericQuery(service: "x", account: "a"), changes: changes, secret: nil, caller: Callers.appA) == 1)
        try home.reopenKeychain()
        let found = try home.keychain.copyMatching(genericQuery(service: "x", account: "a", returnData: true), caller: Callers.appA)
        #expect(found.first?.secret == secret("x"))
        #expect(found.first?.attributes?.accessible == .afterFirstUnlock)
    }

    @Test func emptySecretRoundTrips() throws {
        let home = try KeychainHome()
        try home.keychain.add(.genericPassword, attributes: genericPassword(service: "empty", account: "a"), secret: Data(), caller: Callers.appA)
        let found = try home.keychain.copyMatching(genericQuery(service: "empty", returnData: true), caller: Callers.appA)
        #expect(found.first?.secret == Data())
    }

    @Test func concurrentAddsOfOnePrimaryKeyStoreExactlyOneItem() async throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask {
                    do {
                        try keychain.add(
                            .genericPassword, attributes: genericPassword(service: "race", account: "a"), secret: secret("\(index)"),
                            caller: Callers.appA)
                        return "added"
                    } catch let error as KeychainError {
                        return error.kind.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            var all: [String] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.filter { $0 == "added" }.count == 1)
        #expect(outcomes.filter { $0 == KeychainErrorKind.duplicateItem.rawValue }.count == 7, "\(outcomes)")
        #expect(try keychain.copyMatching(genericQuery(service: "race", limit: .all), caller: Callers.appA).count == 1)
    }

    // MARK: Queries

    @Test func nonKeyAttributesAreFoundByScan() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        var first = genericPassword(service: "s1", account: "a")
        first.label = "Personal"
        first.custom = ["xdg:schema": "org.example.Password", "user": "ada"]
        var second = genericPassword(service: "s2", account: "a")
        second.label = "Work"
        second.custom = ["xdg:schema": "org.example.Password", "user": "bob"]
        var third = genericPassword(service: "s3", account: "a")
        third.label = "Personal"
        let firstID = try keychain.add(.genericPassword, attributes: first, secret: secret("1"), caller: Callers.appA).id
        let secondID = try keychain.add(.genericPassword, attributes: second, secret: secret("2"), caller: Callers.appA).id
        let thirdID = try keychain.add(.genericPassword, attributes: third, secret: secret("3"), caller: Callers.appA).id

        var query = ItemQuery(.genericPassword, limit: .all, returnData: true)
        query.attributes.label = "Work"
        #expect(try keychain.copyMatching(query, caller: Callers.appA).map(\.secret) == [secret("2")])
        query.attributes.label = "Personal"
        #expect(Set(try keychain.copyMatching(query, caller: Callers.appA).map(\.id)) == [firstID, thirdID])
        query.limit = .one
        #expect(try keychain.copyMatching(query, caller: Callers.appA).count == 1)

        // Custom attributes: exact match, a subset of the map suffices.
        query = ItemQuery(.genericPassword, limit: .all)
        query.attributes.custom = ["user": "ada"]
        #expect(try keychain.copyMatching(query, caller: Callers.appA).map(\.id) == [firstID])
        query.attributes.custom = ["xdg:schema": "org.example.Password"]
        #expect(Set(try keychain.copyMatching(query, caller: Callers.appA).map(\.id)) == [firstID, secondID])
        query.attributes.custom = ["xdg:schema": "org.example.Password", "user": "bob"]
        #expect(try keychain.copyMatching(query, caller: Callers.appA).map(\.id) == [secondID])
        query.attributes.custom = ["user": "ADA"]
        expectKeychainError(.itemNotFound, "custom attributes match exactly") { try keychain.copyMatching(query, caller: Callers.appA) }
        query.attributes.custom = ["user": "ad"]
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(query, caller: Callers.appA) }
        query.attributes.custom = ["nobody-has-this": "ada"]
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(query, caller: Callers.appA) }

        // Key and non-key attributes together.
        query = ItemQuery(.genericPassword, limit: .all)
        query.attributes.account = "a"
        query.attributes.label = "Work"
        #expect(try keychain.copyMatching(query, caller: Callers.appA).map(\.id) == [secondID])
        query.attributes.service = "s1"
        expectKeychainError(.itemNotFound, "s1 is labelled Personal") { try keychain.copyMatching(query, caller: Callers.appA) }

        // Update and delete by a non-key attribute.
        var changes = ItemAttributes()
        changes.comment = "tagged"
        var byCustom = ItemQuery(.genericPassword)
        byCustom.attributes.custom = ["user": "bob"]
        #expect(try keychain.update(byCustom, changes: changes, secret: nil, caller: Callers.appA) == 1)
        #expect(try keychain.copyMatching(ItemQuery(.genericPassword, id: secondID), caller: Callers.appA).first?.attributes?.comment == "tagged")
        #expect(try keychain.delete(byCustom, caller: Callers.appA) == 1)
        #expect(Set(try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA).map(\.id)) == [firstID, thirdID])
    }

    @Test func anIDFindsItsItemWhateverItsSynchronizable() throws {
        // An id names exactly one item (the CLI lists items, then reads or deletes one by id):
        // the "unset synchronizable means false" default must not hide a synchronizable item
        // from a query by its id.
        let home = try KeychainHome()
        var attributes = genericPassword(service: "s", account: "a")
        attributes.synchronizable = true
        let item = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("synced"), caller: Callers.appA)
        let byID = try? home.keychain.copyMatching(ItemQuery(.genericPassword, id: item.id, returnData: true), caller: Callers.appA)
        #expect(byID?.first?.secret == secret("synced"), "a synchronizable item is not found by its id")
        let deleted = try? home.keychain.delete(ItemQuery(.genericPassword, id: item.id), caller: Callers.appA)
        #expect(deleted == 1, "a synchronizable item cannot be deleted by its id")
    }

    @Test func queryMatchingNothingIsItemNotFound() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        expectKeychainError(.itemNotFound, "empty keychain") {
            try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA)
        }
        try keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("v"), caller: Callers.appA)
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "s", account: "b"), caller: Callers.appA) }
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "S", account: "a"), caller: Callers.appA) }
        var byLabel = ItemQuery(.genericPassword)
        byLabel.attributes.label = "none"
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(byLabel, caller: Callers.appA) }
        expectKeychainError(.itemNotFound, "other class") {
            try keychain.copyMatching(ItemQuery(.internetPassword, limit: .all), caller: Callers.appA)
        }
        var accessibleQuery = genericQuery(service: "s", account: "a")
        accessibleQuery.attributes.accessible = .always
        expectKeychainError(.itemNotFound, "the item is whenUnlocked") { try keychain.copyMatching(accessibleQuery, caller: Callers.appA) }
        // An id of another class's table or of no item.
        let id = try keychain.copyMatching(genericQuery(service: "s"), caller: Callers.appA)[0].id
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(.internetPassword, id: id), caller: Callers.appA) }
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(ItemQuery(.genericPassword, id: "12345"), caller: Callers.appA) }
        expectKeychainError(.param, "ids are numbers") {
            try keychain.copyMatching(ItemQuery(.genericPassword, id: "not-a-number"), caller: Callers.appA)
        }
        // An id plus attributes that do not match it.
        var idAndService = genericQuery(service: "other")
        idAndService.id = id
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(idAndService, caller: Callers.appA) }
    }

    @Test func attributesOfAnotherClassAreParamErrors() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        var serverOnGeneric = genericPassword(service: "s", account: "a")
        serverOnGeneric.server = "example.com"
        expectKeychainError(.param) { try keychain.add(.genericPassword, attributes: serverOnGeneric, secret: secret("v"), caller: Callers.appA) }
        var serviceOnInternet = Self.internetPassword()
        serviceOnInternet.service = "s"
        expectKeychainError(.param) { try keychain.add(.internetPassword, attributes: serviceOnInternet, secret: secret("v"), caller: Callers.appA) }
        var accountOnKey = Self.key()
        accountOnKey.account = "a"
        expectKeychainError(.param) { try keychain.add(.key, attributes: accountOnKey, secret: secret("v"), caller: Callers.appA) }
        var keyClassOnGeneric = genericPassword(service: "s", account: "a")
        keyClassOnGeneric.keyClass = .public
        expectKeychainError(.param) { try keychain.add(.genericPassword, attributes: keyClassOnGeneric, secret: secret("v"), caller: Callers.appA) }
        var portOutOfRange = Self.internetPassword()
        portOutOfRange.port = 70000
        expectKeychainError(.param) { try keychain.add(.internetPassword, attributes: portOutOfRange, secret: secret("v"), caller: Callers.appA) }
        for itemClass in ItemClass.allCases { #expect(try home.rowCount(itemClass) == 0) }

        try keychain.add(.genericPassword, attributes: genericPassword(service: "s", account: "a"), secret: secret("v"), caller: Callers.appA)
        var query = genericQuery(service: "s")
        query.attributes.server = "example.com"
        expectKeychainError(.param, "query") { try keychain.copyMatching(query, caller: Callers.appA) }
        expectKeychainError(.param, "delete") { try keychain.delete(query, caller: Callers.appA) }
        expectKeychainError(.param, "update query") {
            try keychain.update(query, changes: ItemAttributes(), secret: secret("x"), caller: Callers.appA)
        }
        var changes = ItemAttributes()
        changes.server = "example.com"
        expectKeychainError(.param, "update changes") {
            try keychain.update(genericQuery(service: "s"), changes: changes, secret: nil, caller: Callers.appA)
        }
        let stored = try keychain.copyMatching(genericQuery(service: "s", returnData: true), caller: Callers.appA)
        #expect(stored.first?.secret == secret("v"))
        #expect(stored.first?.attributes?.server == nil)
    }

    @Test func oversizeSecretIsRefusedAndNothingStored() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let tooBig = Data(repeating: 0x41, count: KeychainStore.maximumSecretBytes + 1)
        expectKeychainError(.param) {
            try keychain.add(.genericPassword, attributes: genericPassword(service: "big", account: "a"), secret: tooBig, caller: Callers.appA)
        }
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(genericQuery(service: "big"), caller: Callers.appA) }
        #expect(try home.rowCount(.genericPassword) == 0)

        // The limit itself is fine, and an update past it changes nothing.
        let atLimit = Data((0..<KeychainStore.maximumSecretBytes).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try keychain.add(.genericPassword, attributes: genericPassword(service: "big", account: "a"), secret: atLimit, caller: Callers.appA)
        var changes = ItemAttributes()
        changes.label = "should not stick"
        expectKeychainError(.param) { try keychain.update(genericQuery(service: "big"), changes: changes, secret: tooBig, caller: Callers.appA) }
        let stored = try keychain.copyMatching(genericQuery(service: "big", returnData: true), caller: Callers.appA)
        #expect(stored.first?.secret == atLimit)
        #expect(stored.first?.attributes?.label == nil)
    }

    /// Every text attribute takes `ItemAttribute.maximumTextBytes` UTF-8 bytes and refuses one
    /// more. A refused add stores nothing, a refused update changes nothing.
    @Test(arguments: ItemAttribute.all.filter { $0.rules.contains(.limitedLength) && $0.classes.contains(.genericPassword) }.map(\.name))
    func textAttributesStopAtTheirLimit(name: String) throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let longest = String(repeating: "é", count: ItemAttribute.maximumTextBytes / 2)
        // A caller that may use a group of the longest name, so the access group is stored too.
        let caller = Caller(accessGroups: ["A.app", longest], defaultAccessGroup: "A.app")
        func attributes(_ value: String) throws -> ItemAttributes {
            var attributes = genericPassword(service: "limits", account: "a")
            let attribute = try #require(ItemAttribute.all.first { $0.name == name })
            guard case .text(_, let set) = attribute.value else { throw KeychainError.param("\(name) is no text") }
            set(&attributes, value)
            return attributes
        }
        let refusal = KeychainError.param("attribute \(name) is longer than \(ItemAttribute.maximumTextBytes) bytes")
        #expect(throws: refusal) {
            try keychain.add(.genericPassword, attributes: try attributes("x" + longest), secret: secret("v"), caller: caller)
        }
        #expect(try home.rowCount(.genericPassword) == 0)
        let added = try keychain.add(.genericPassword, attributes: try attributes(longest), secret: secret("v"), caller: caller)
        #expect(throws: refusal) {
            try keychain.update(ItemQuery(.genericPassword, id: added.id), changes: try attributes("x" + longest), secret: nil, caller: caller)
        }
        let stored = try keychain.copyMatching(ItemQuery(.genericPassword, id: added.id, returnAttributes: true), caller: caller)
        #expect(AttributeValues(try #require(stored.first?.attributes)).values[name] as? String == longest)
    }

    /// The free-form map takes 64 pairs, keys of 256 bytes and values of
    /// `ItemAttribute.maximumTextBytes`; one more pair, or a byte more of a key or a value, and
    /// the add stores nothing.
    @Test func theFreeFormMapStopsAtItsLimits() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        let longValue = String(repeating: "é", count: ItemAttribute.maximumTextBytes / 2)
        let widest = Dictionary(
            uniqueKeysWithValues: (0..<64).map { index in
                let name = "key-\(index)-"
                return (name + String(repeating: "k", count: 256 - name.utf8.count), longValue)
            })
        let tooMany = widest.merging(["one-more": "v"]) { $1 }
        var tooLongKey = widest
        tooLongKey.removeValue(forKey: tooLongKey.keys.first!)
        tooLongKey[String(repeating: "k", count: 257)] = "v"
        var tooLongValue = widest
        tooLongValue[tooLongValue.keys.first!] = "x" + longValue
        for refused in [tooMany, tooLongKey, tooLongValue] {
            var attributes = genericPassword(service: "map", account: "a")
            attributes.custom = refused
            #expect(
                throws: KeychainError.param(
                    "custom attributes: at most 64, keys up to 256 bytes, values up to \(ItemAttribute.maximumTextBytes) bytes")
            ) {
                try keychain.add(.genericPassword, attributes: attributes, secret: secret("v"), caller: Callers.appA)
            }
        }
        #expect(try home.rowCount(.genericPassword) == 0)
        var attributes = genericPassword(service: "map", account: "a")
        attributes.custom = widest
        let added = try keychain.add(.genericPassword, attributes: attributes, secret: secret("v"), caller: Callers.appA)
        let stored = try keychain.copyMatching(ItemQuery(.genericPassword, id: added.id, returnAttributes: true), caller: Callers.appA)
        #expect(stored.first?.attributes?.custom == widest)
    }

    @Test func unsetSynchronizableMatchesOnlyNonSynchronizableItems() throws {
        let home = try KeychainHome()
        let keychain = home.keychain
        var local = genericPassword(service: "s", account: "a")
        local.label = "local"
        var synced = genericPassword(service: "s", account: "a")
        synced.synchronizable = true
        synced.label = "synced"
        let localID = try keychain.add(.genericPassword, attributes: local, secret: secret("local"), caller: Callers.appA).id
        let syncedID = try keychain.add(.genericPassword, attributes: synced, secret: secret("synced"), caller: Callers.appA).id

        // By primary key, by scan, and listing everything: unset means "not synchronizable".
        #expect(try keychain.copyMatching(genericQuery(service: "s", account: "a", limit: .all), caller: Callers.appA).map(\.id) == [localID])
        #expect(try keychain.copyMatching(genericQuery(service: "s", limit: .all), caller: Callers.appA).map(\.id) == [localID])
        #expect(try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA).map(\.id) == [localID])
        var byLabel = ItemQuery(.genericPassword, limit: .all)
        byLabel.attributes.label = "synced"
        expectKeychainError(.itemNotFound) { try keychain.copyMatching(byLabel, caller: Callers.appA) }

        var syncQuery = genericQuery(service: "s", account: "a", limit: .all, returnData: true)
        syncQuery.attributes.synchronizable = true
        let found = try keychain.copyMatching(syncQuery, caller: Callers.appA)
        #expect(found.map(\.id) == [syncedID])
        #expect(found.first?.secret == secret("synced"))
        syncQuery.attributes.synchronizable = false
        #expect(try keychain.copyMatching(syncQuery, caller: Callers.appA).map(\.id) == [localID])

        // Delete without synchronizable leaves the synchronizable item.
        #expect(try keychain.delete(genericQuery(service: "s"), caller: Callers.appA) == 1)
        syncQuery.attributes.synchronizable = true
        #expect(try keychain.copyMatching(syncQuery, caller: Callers.appA).map(\.id) == [syncedID])
    }
}
