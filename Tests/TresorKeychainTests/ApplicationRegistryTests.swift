import Foundation
import GRDB
import Testing
import TresorKeybag
import TresorStorage

@testable import TresorKeychain

/// The registry of applications: executable hash → application id, team id, access groups
/// (docs/API.md, "Applications").
@Suite struct ApplicationRegistryTests {
    static func hash(_ byte: UInt8) -> Data { Data(repeating: byte, count: 32) }

    static func application(
        _ id: String = "TEAM1.com.example.mail", team: String = "TEAM1", groups: [String] = ["TEAM1.shared"], hash: Data = hash(1)
    ) -> Application {
        Application(
            applicationID: id, teamID: team, accessGroups: groups, executableSHA256: hash,
            executablePath: "/usr/bin/\(id)", registeredAt: Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func registerListLookUpRemove() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        #expect(try registry.list().isEmpty)
        #expect(try registry.application(executableSHA256: Self.hash(1)) == nil)

        let mail = Self.application()
        let notes = Self.application("TEAM1.com.example.notes", groups: ["TEAM1.shared", "TEAM1.notes"], hash: Self.hash(2))
        let other = Self.application("TEAM2.org.other.tool", team: "TEAM2", groups: [], hash: Self.hash(3))
        try registry.register(notes)
        try registry.register(mail)
        try registry.register(other)

        #expect(try registry.list() == [mail, notes, other], "listed by application id, every field kept")
        #expect(try registry.application(executableSHA256: Self.hash(1)) == mail)
        #expect(try registry.application(executableSHA256: Self.hash(2)) == notes)
        #expect(try registry.application(executableSHA256: Self.hash(3)) == other)
        #expect(try registry.application(executableSHA256: Self.hash(9)) == nil)
        #expect(notes.allowedGroups == ["TEAM1.com.example.notes", "TEAM1.shared", "TEAM1.notes"])

        try registry.remove(applicationID: "TEAM1.com.example.notes")
        #expect(try registry.application(executableSHA256: Self.hash(2)) == nil, "the lookup forgets a removed application")
        #expect(try registry.list() == [mail, other])
        expectKeychainError(.itemNotFound) { try registry.remove(applicationID: "TEAM1.com.example.notes") }
        expectKeychainError(.itemNotFound) { try registry.remove(applicationID: "never.registered") }

        // It can be registered again after removal.
        try registry.register(notes)
        #expect(try registry.application(executableSHA256: Self.hash(2)) == notes)
    }

    @Test func lookupSeesApplicationsRegisteredAfterAnEarlierLookup() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        try registry.register(Self.application())
        #expect(try registry.application(executableSHA256: Self.hash(2)) == nil)
        let later = Self.application("TEAM1.com.example.later", hash: Self.hash(2))
        try registry.register(later)
        #expect(try registry.application(executableSHA256: Self.hash(2)) == later)
    }

    @Test func registrySurvivesReopening() throws {
        let home = try KeychainHome()
        let mail = Self.application()
        try home.keychain.applications.register(mail)
        try home.restart()
        try home.unlock()  // the registry opens after the first unlock
        #expect(try home.keychain.applications.list() == [mail])
        #expect(try home.keychain.applications.application(executableSHA256: Self.hash(1)) == mail)
    }

    @Test func registrationTimeIsKept() throws {
        let home = try KeychainHome()
        let now = Date()
        try home.keychain.applications.register(
            Application(
                applicationID: "TEAM1.com.example.now", teamID: "TEAM1", accessGroups: [], executableSHA256: Self.hash(5), executablePath: "/bin/now",
                registeredAt: now))
        let stored = try #require(try home.keychain.applications.list().first)
        #expect(sameInstant(stored.registeredAt, now))
    }

    @Test func groupsMustCarryTheTeamPrefix() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        for groups in [
            ["OTHER.x"], ["TEAM1.shared", "OTHER.x"], ["TEAM1"], ["TEAM1."], ["TEAM1x.shared"], ["team1.shared"], ["x.TEAM1.shared"], [""],
        ] {
            expectKeychainError(.param, "groups \(groups)") { try registry.register(Self.application(groups: groups)) }
        }
        #expect(try registry.list().isEmpty)
        // Accepted: no group, and several prefixed groups.
        try registry.register(Self.application(groups: []))
        try registry.register(Self.application("TEAM1.com.example.two", groups: ["TEAM1.a", "TEAM1.b-c_d.e"], hash: Self.hash(2)))
        #expect(try registry.list().count == 2)
    }

    @Test func duplicateHashOrApplicationIDIsADuplicateItem() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        let mail = Self.application()
        try registry.register(mail)
        expectKeychainError(.duplicateItem, "same hash, another id") {
            try registry.register(Self.application("TEAM1.com.example.other", hash: Self.hash(1)))
        }
        expectKeychainError(.duplicateItem, "same id, another hash") {
            try registry.register(Self.application("TEAM1.com.example.mail", hash: Self.hash(7)))
        }
        expectKeychainError(.duplicateItem, "identical") { try registry.register(mail) }
        #expect(try registry.list() == [mail], "the original registration is unchanged")
        #expect(try registry.application(executableSHA256: Self.hash(7)) == nil)
    }

    /// `tresor app register` of an id again: a rebuilt executable replaces the old one in one
    /// transaction; an executable registered as another application stays a duplicate, and then
    /// nothing changes.
    @Test func registeringAnIdAgainReplacesItsExecutable() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        let mail = Self.application()
        try registry.register(mail)
        let other = Self.application("TEAM1.com.example.other", hash: Self.hash(9))
        try registry.register(other)
        let rebuilt = Self.application("TEAM1.com.example.mail", hash: Self.hash(7))
        #expect(try registry.register(rebuilt, replacing: true))
        #expect(try registry.application(executableSHA256: Self.hash(7)) == rebuilt)
        #expect(try registry.application(executableSHA256: mail.executableSHA256) == nil, "the old executable is no longer the application")
        expectKeychainError(.duplicateItem, "another application's executable") {
            try registry.register(Self.application("TEAM1.com.example.mail", hash: Self.hash(9)), replacing: true)
        }
        #expect(try registry.list() == [rebuilt, other], "a refused replacement changes nothing")
    }

    @Test func invalidApplicationsAreParamErrors() throws {
        let home = try KeychainHome()
        let registry = home.keychain.applications
        let badIDs = [
            "", "has space", "../../etc/passwd", "-leading-dash", ".hidden", "semi;colon", "slash/inside", String(repeating: "a", count: 129),
            "tab\tid", "ünïcode",
        ]
        for id in badIDs {
            expectKeychainError(.param, "application id \(id.debugDescription)") { try registry.register(Self.application(id, groups: [])) }
        }
        for team in ["", "TEAM 1", "TEAM.1", "TEAM-1", String(repeating: "T", count: 33)] {
            expectKeychainError(.param, "team id \(team.debugDescription)") { try registry.register(Self.application(team: team, groups: [])) }
        }
        for hash in [Data(), Data(repeating: 1, count: 31), Data(repeating: 1, count: 33), Data(repeating: 1, count: 64)] {
            expectKeychainError(.param, "hash of \(hash.count) bytes") { try registry.register(Self.application(hash: hash)) }
        }
        #expect(try registry.list().isEmpty)
        // The limits themselves are fine.
        try registry.register(
            Self.application(
                String(repeating: "T", count: 32) + "." + String(repeating: "a", count: 95), team: String(repeating: "T", count: 32), groups: [],
                hash: Self.hash(4)))
        #expect(try registry.list().count == 1)
    }

    /// An application id is an access group too: it must carry the team's prefix, or an app
    /// could call itself `tresor` (the CLI's group) or another team's group.
    @Test func theApplicationIDMustBeTheTeams() throws {
        for (id, team) in [("tresor", "EVIL"), ("TEAM2.shared", "TEAM1"), ("TEAM1", "TEAM1"), ("TEAM1.", "TEAM1")] {
            expectKeychainError(.param, "\(id) for team \(team)") {
                try Self.application(id, team: team, groups: [], hash: Self.hash(9)).validate()
            }
        }
    }

    /// A process of the same user that writes the database directly cannot register itself:
    /// rows are sealed under a key that needs the passcode (after a restart, the first unlock).
    @Test func forgedRowsAreIgnoredAndNothingIsInTheClear() throws {
        let home = try KeychainHome()
        try home.keychain.applications.register(Self.application("TEAM1.marker-application-id", groups: ["TEAM1.marker-group"]))
        // Forge a row for another executable, as a same-uid attacker with SQLite could.
        try home.keychain.database.write { db in
            try db.execute(
                sql: "INSERT INTO applications (id_tag, executable_tag, sealed) VALUES (?, ?, ?)",
                arguments: [Data(repeating: 1, count: 32), Data(repeating: 2, count: 32), Data(repeating: 3, count: 60)])
            // And copy the genuine sealed row under another executable's tag.
            try db.execute(
                sql: "INSERT INTO applications (id_tag, executable_tag, sealed) SELECT ?, ?, sealed FROM applications LIMIT 1",
                arguments: [Data(repeating: 4, count: 32), Data(repeating: 5, count: 32)])
        }
        try home.reopenKeychain()
        #expect(try home.keychain.applications.list().map(\.applicationID) == ["TEAM1.marker-application-id"])
        #expect(try home.keychain.applications.application(executableSHA256: Self.hash(1))?.applicationID == "TEAM1.marker-application-id")
        #expect(SealedDatabase.checkpoint(home.keychain.database))
        #expect(home.files(containing: "marker-application-id").isEmpty)
        #expect(home.files(containing: "marker-group").isEmpty)
        #expect(home.files(containing: "/usr/bin/TEAM1").isEmpty)

        // Locked since start: applications are not recognised until the first unlock.
        try home.restart()
        expectKeychainError(.interactionNotAllowed) { try home.keychain.applications.application(executableSHA256: Self.hash(1)) }
        try home.unlock()
        home.lock()
        #expect(try home.keychain.applications.application(executableSHA256: Self.hash(1)) != nil, "after the first unlock, also while locked")
    }
}
