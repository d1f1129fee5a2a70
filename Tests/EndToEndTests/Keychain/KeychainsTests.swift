import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Keychains the user creates: each its own store, passcode and lock state (docs/API.md,
/// "Created keychains").
@Suite(.blocksItsThread, .serialized) struct KeychainsTests {
    @Test func aCreatedKeychainHasItsOwnPasscodeAndLock() throws {
        let harness = try Harness()
        let (login, work) = ("e2e-login-passcode", "e2e-work-passcode")
        harness.secrets = [login, work]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: login + "\n").succeeded)
        let created = try harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: "\(work)\n\(work)\n")
        #expect(created.succeeded, "\(created.stderr)")
        #expect(try harness.json([KeychainSummary].self, ["keychain", "list"]).map(\.name) == ["login", "work", "System Roots"])
        // Refused before any passcode is read: the input is left unread.
        let again = try harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: "")
        #expect(!again.succeeded && again.stderr.contains("a keychain named work exists already"), "\(again.stderr)")
        #expect(!(try harness.tresor(["keychain", "create", "../evil", "--passcode-stdin"], input: "\(work)\n").succeeded))
        // A name differing only in case would hide one keychain's items behind the other's name.
        for name in ["Work", "LOGIN"] {
            let twin = try harness.tresor(["keychain", "create", name, "--passcode-stdin"], input: "\(work)\n\(work)\n")
            #expect(!twin.succeeded && twin.stderr.contains("names differing only in case are refused"), "\(twin.stderr)")
        }
        #expect(try harness.json([KeychainSummary].self, ["keychain", "list"]).map(\.name) == ["login", "work", "System Roots"])

        #expect(
            try harness.tresor(
                ["item", "add", "--keychain", "work", "--service", "vpn", "--readable-by-scripts", "--secret-stdin"], input: "work-secret\n"
            ).succeeded)
        #expect(
            try harness.tresor(["item", "add", "--service", "mail", "--readable-by-scripts", "--secret-stdin"], input: "login-secret\n").succeeded)
        // Only the login keychain syncs: `--synchronizable` in work is refused before the secret
        // is read, and the daemon refuses the change to it.
        let synced = try harness.tresor(
            ["item", "add", "--keychain", "work", "--service", "vpn-synced", "--synchronizable", "--secret-stdin"], input: "never-read\n")
        #expect(synced.status == 64 && synced.stderr.contains("only the login keychain syncs"), "\(synced.stderr)")
        let changed = try harness.tresor(["item", "update", "--keychain", "work", "--service", "vpn", "--set", "synchronizable=true"])
        #expect(!changed.succeeded && changed.stderr.contains("only the login keychain syncs"), "\(changed.stderr)")
        // Items live in their own keychain only.
        #expect(try harness.json(ErrorResponse.self, ["item", "get", "--service", "vpn"]).error.code == .itemNotFound)
        #expect(try harness.tresor(["item", "get", "--keychain", "work", "--service", "vpn"]).stdout == "work-secret")

        // Locking work leaves login open, and the other way round.
        #expect(try harness.tresor(["lock", "--keychain", "work"]).succeeded)
        #expect(try harness.json(ErrorResponse.self, ["item", "get", "--keychain", "work", "--service", "vpn"]).error.code == .interactionNotAllowed)
        #expect(try harness.tresor(["item", "get", "--service", "mail"]).stdout == "login-secret")
        let wrong = try harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: login + "\n")
        #expect(wrong.status == 1, "the login passcode does not open another keychain")
        #expect(try harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: work + "\n").succeeded)
        #expect(try harness.tresor(["item", "get", "--keychain", "work", "--service", "vpn"]).stdout == "work-secret")

        // After a restart, a created keychain is locked until its own passcode is given.
        harness.killDaemon()
        try harness.startDaemon()
        #expect(try harness.status().keychains?.first { $0.name == "work" }?.state == "lockedSinceStart")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: login + "\n").succeeded)
        #expect(try harness.json(ErrorResponse.self, ["item", "get", "--keychain", "work", "--service", "vpn"]).error.code == .interactionNotAllowed)
        #expect(try harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: work + "\n").succeeded)
        #expect(try harness.tresor(["item", "get", "--keychain", "work", "--service", "vpn"]).stdout == "work-secret")

        // `tresor lock` locks them all.
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(
            try harness.json([KeychainSummary].self, ["keychain", "list"]).filter { $0.name != "System Roots" }.allSatisfy { $0.state == "locked" })

        // Deleting needs its passcode, and takes its files with it.
        #expect(!(try harness.tresor(["keychain", "delete", "work", "--passcode-stdin"], input: login + "\n").succeeded))
        #expect(try harness.tresor(["keychain", "delete", "work", "--passcode-stdin"], input: work + "\n").succeeded)
        #expect(try harness.json(ErrorResponse.self, ["item", "get", "--keychain", "work", "--service", "vpn"]).error.code == .noSuchKeychain)
        let left = try FileManager.default.contentsOfDirectory(atPath: harness.paths.keychainsFolder.path)
        #expect(left.isEmpty, "\(left)")
        #expect(try harness.homeFiles().allSatisfy { $0.1.range(of: Data("work-secret".utf8)) == nil })
        try harness.expectNoSecretLeaked()
    }

    /// A database, its WAL and an attempts file planted under a keychain's name before it is
    /// created — here another keychain's, with an item in it — are removed, not adopted: the new
    /// keychain starts empty and works.
    @Test func filesPlantedUnderAKeychainsNameAreNotAdopted() throws {
        let (login, source, work) = ("e2e-login-plant", "e2e-source-plant", "e2e-work-plant")
        let harness = try Harness.initialized(passcode: login, secrets: [source, work, "planted-secret"])
        #expect(try harness.tresor(["keychain", "create", "source", "--passcode-stdin"], input: "\(source)\n\(source)\n").succeeded)
        #expect(
            try harness.tresor(
                ["item", "add", "--keychain", "source", "--service", "planted", "--readable-by-scripts", "--secret-stdin"], input: "planted-secret\n"
            ).succeeded)
        harness.killDaemon()
        let folder = harness.paths.keychainsFolder
        for suffix in ["keychain.db", "keychain.db-wal", "keychain.db-shm"] {
            let from = folder.appendingPathComponent("source.\(suffix)")
            if FileManager.default.fileExists(atPath: from.path) {
                try FileManager.default.copyItem(at: from, to: folder.appendingPathComponent("work.\(suffix)"))
            }
        }
        try Data("99".utf8).write(to: folder.appendingPathComponent("work.unlock-attempts"))
        try harness.startDaemon()
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: login + "\n").succeeded)

        let created = try harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: "\(work)\n\(work)\n")
        #expect(created.succeeded, "\(created.stderr)")
        let listed = try harness.tresor(["item", "list", "--keychain", "work", "--json"])
        #expect(!listed.stdout.contains("planted") && listed.stdout.contains("itemNotFound"), "\(listed.stdout) \(listed.stderr)")
        #expect(
            try harness.tresor(
                ["item", "add", "--keychain", "work", "--service", "vpn", "--readable-by-scripts", "--secret-stdin"], input: "work-secret\n"
            ).succeeded)
        #expect(try harness.tresor(["item", "get", "--keychain", "work", "--service", "vpn"]).stdout == "work-secret")
        // A wrong passcode counts from zero, not from the planted count.
        #expect(try harness.tresor(["lock", "--keychain", "work"]).succeeded)
        #expect(try harness.tresor(["unlock", "--keychain", "work", "--passcode-stdin"], input: work + "\n").succeeded)
        try harness.expectNoSecretLeaked()
    }
}
