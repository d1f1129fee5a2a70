import Foundation
import Testing
import TresorModel

/// The model is what the daemon and every client exchange: its JSON names and raw values are
/// part of the documented API (docs/API.md), so they are pinned here.
@Suite struct ModelCodingTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test func itemClassesAndProtectionClassesKeepApplesNames() {
        #expect(ItemClass.allCases.map(\.rawValue) == ["genp", "inet", "cert", "keys"])
        #expect(
            ProtectionClass.allCases.map(\.rawValue) == [
                "whenUnlocked", "afterFirstUnlock", "always", "whenUnlockedThisDeviceOnly",
                "afterFirstUnlockThisDeviceOnly", "alwaysThisDeviceOnly", "whenPasscodeSetThisDeviceOnly",
            ])
        #expect(ProtectionClass.default == .whenUnlocked)
    }

    @Test func eachProtectionClassIsAvailableWhenAppleSaysItIs() {
        let availability: [ProtectionClass: ProtectionClass.Availability] = [
            .whenUnlocked: .whenUnlocked, .whenUnlockedThisDeviceOnly: .whenUnlocked, .whenPasscodeSetThisDeviceOnly: .whenUnlocked,
            .afterFirstUnlock: .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: .afterFirstUnlock,
            .always: .always, .alwaysThisDeviceOnly: .always,
        ]
        for (protectionClass, expected) in availability { #expect(protectionClass.availability == expected, "\(protectionClass)") }
        #expect(ProtectionClass.allCases.filter(\.isThisDeviceOnly).count == 4)
        #expect(!ProtectionClass.always.isThisDeviceOnly && ProtectionClass.alwaysThisDeviceOnly.isThisDeviceOnly)
        #expect(ProtectionClass.allCases.filter(\.requiresPasscode) == [.whenPasscodeSetThisDeviceOnly])
    }

    @Test func aQueryEncodesWithTheAPIsNamesAndOmitsWhatIsUnset() throws {
        var query = ItemQuery(.genericPassword, limit: .all, returnData: true)
        query.attributes.service = "api.example.com"
        query.attributes.accessible = .afterFirstUnlock
        #expect(
            try Self.json(query)
                == #"{"attributes":{"accessible":"afterFirstUnlock","service":"api.example.com"},"itemClass":"genp","limit":"all","returnAttributes":true,"returnData":true}"#
        )
        let decoded = try JSONDecoder().decode(ItemQuery.self, from: Data(try Self.json(query).utf8))
        #expect(decoded == query)
    }

    @Test func anItemNeverCarriesASecretItWasNotAskedFor() throws {
        let item = KeychainItem(id: "42", itemClass: .key, attributes: nil, secret: nil)
        #expect(try Self.json(item) == #"{"id":"42","itemClass":"keys"}"#)
    }

    @Test func anApplicationMayUseItsOwnGroupFirstThenItsTeams() {
        let application = Application(
            applicationID: "TEAM.app", teamID: "TEAM", accessGroups: ["TEAM.shared"], executableSHA256: Data(count: 32), executablePath: "/bin/app")
        #expect(application.allowedGroups == ["TEAM.app", "TEAM.shared"])
    }

    @Test func theLockedNoteMessagesSayWhichPassphraseAndWhatToDo() {
        let current = LockInfo(source: .tresor, generation: 2, isCurrent: true, setOn: Date(timeIntervalSince1970: 0), isOpen: false)
        #expect(LockedNoteMessage.passphraseRequired(current) == "this needs the notes passphrase (no secure session is open): enter it")
        let apple = LockInfo(source: .appleNotes, isCurrent: false, hint: "cat", setOn: Date(timeIntervalSince1970: 1_700_000_000), isOpen: false)
        #expect(apple.explanation == "this note was locked with a passphrase imported from Apple Notes (hint: cat, set on 2023-11-14)")
        #expect(LockedNoteMessage.wrongPassphrase(failedAttempts: 1, hint: nil, retryAfterSeconds: nil) == "wrong passphrase (1 consecutive failure)")
        #expect(
            LockedNoteMessage.wrongPassphrase(failedAttempts: 5, hint: "cat", retryAfterSeconds: 60)
                == "wrong passphrase (5 consecutive failures); hint: cat; try again in 60 s")
    }

    /// What `tresor-read-apple-notes` hands `tresor`: every kind of content survives the trip.
    @Test func anAppleNotesReadingRoundTrips() throws {
        let locked = AppleLockedNote(
            salt: Data(repeating: 1, count: 16), iterations: 20_000, wrappedKey: Data(repeating: 2, count: 24),
            iv: Data(repeating: 3, count: 16), tag: Data(repeating: 4, count: 16), ciphertext: Data([5, 6]), hint: nil)
        let reading = AppleNotesReading(
            notes: [
                NoteImport(
                    title: "Bread", folder: "Recipes", created: Date(timeIntervalSince1970: 700_000_000), modified: nil, content: .text("flour\n")),
                NoteImport(title: "Vault", folder: nil, created: nil, modified: nil, content: .appleLocked(locked)),
            ],
            unreadable: ["note 7 in the Apple database: damaged body"], unreadWriteAheadLog: true)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let back = try decoder.decode(AppleNotesReading.self, from: try Self.encoder.encode(reading))
        #expect(back.notes == reading.notes && back.unreadable == reading.unreadable && back.unreadWriteAheadLog)
    }
}
