import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The real binaries on a temporary home: init, unlock, lock, passcode change and removal.
@Suite(.blocksItsThread, .serialized) struct KeybagLifecycleTests {
    @Test func initUnlockLockAndStatus() throws {
        let harness = try Harness()
        let passcode = "e2e-marker-passcode-\(UUID().uuidString.prefix(6))"
        harness.secrets = [passcode]
        try harness.startDaemon()

        #expect(try harness.status().keybag == .notInitialized)
        let created = try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n" + passcode + "\n")
        #expect(created.succeeded, "\(created.stderr)")
        #expect(try harness.status().keybag == .unlocked)

        #expect(try harness.tresor(["lock"]).succeeded)
        let locked = try harness.status()
        #expect(locked.keybag == .locked)
        #expect(!locked.availableClasses.contains("whenUnlocked"))
        #expect(locked.availableClasses.contains("afterFirstUnlock"))
        // It says why and what last counted as activity (the `tresor lock` itself).
        #expect(
            locked.lockReason?.hasPrefix("asked by ") == true && locked.lockReason?.contains("tresor (pid ") == true, "\(locked.lockReason ?? "nil")")
        #expect(locked.lockedAt != nil)
        #expect(locked.lastActivity?.contains("tresor (pid ") == true, "\(locked.lastActivity ?? "nil")")
        #expect(locked.serving == nil, "neither the web nor the Secret Service was asked for")
        #expect(try harness.tresor(["status"]).stdout.contains("ago: asked by "))

        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let unlocked = try harness.status()
        #expect(unlocked.keybag == .unlocked)
        #expect(unlocked.passcodeSet)
        #expect(unlocked.availableClasses.count == 7)
        #expect(unlocked.lockReason == nil, "an unlocked keybag gives no lock reason")

        // Text status reads as a person expects.
        #expect(try harness.tresor(["status"]).stdout.contains("Keybag:     unlocked (passcode set)"))
        #expect(try harness.tresor(["init", "--no-passcode"]).stderr.contains("already has a keybag"))
        try harness.expectNoSecretLeaked()
    }

    @Test func theDaemonStartsLockedAndTheCLIStartsIt() throws {
        let harness = try Harness()
        let passcode = "e2e-autostart-\(UUID().uuidString.prefix(6))"
        harness.secrets = [passcode]
        // No daemon yet: the CLI starts one.
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let first = try harness.status()
        harness.stopDaemon()
        let second = try harness.status()  // started again by the CLI
        #expect(second.pid != first.pid)
        #expect(second.keybag == .lockedSinceStart)
        #expect(second.availableClasses.sorted() == ["always", "alwaysThisDeviceOnly"])
        try harness.expectNoSecretLeaked()
    }

    @Test func passcodeChangeAndRemoval() throws {
        let harness = try Harness()
        let (old, new) = ("e2e-old-\(UUID().uuidString.prefix(6))", "e2e-new-\(UUID().uuidString.prefix(6))")
        harness.secrets = [old, new]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: old + "\n").succeeded)

        let mismatch = try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(old)\n\(new)\nsomething-else\n")
        #expect(!mismatch.succeeded)
        #expect(mismatch.stderr.contains("differ"))

        let change = try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(old)\n\(new)\n\(new)\n")
        #expect(change.succeeded, "\(change.stderr)")
        harness.killDaemon()
        try harness.startDaemon()
        let wrong = try harness.tresor(["unlock", "--passcode-stdin", "--verbose"], input: old + "\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("wrong passcode"))
        #expect(wrong.stderr.contains("-25293"))
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: new + "\n").succeeded)

        // A short passcode is taken, with a warning that gives its length only: it can be tried
        // offline by a program that copies the home and the device key.
        let short = try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(new)\n4821\n4821\n")
        #expect(short.succeeded, "\(short.stderr)")
        #expect(short.stderr.contains("warning: a passcode of 4 characters is guessed quickly"), "\(short.stderr)")
        #expect(!short.stderr.contains("4821") && !short.stdout.contains("4821"))
        #expect(!change.stderr.contains("warning"), "a long one is not warned about: \(change.stderr)")

        #expect(try harness.tresor(["passcode", "remove", "--passcode-stdin"], input: "4821\n").succeeded)
        let status = try harness.status()
        #expect(!status.passcodeSet)
        #expect(!status.availableClasses.contains("whenPasscodeSetThisDeviceOnly"))
        harness.killDaemon()
        try harness.startDaemon()
        #expect(try harness.status().keybag == .unlocked, "without a passcode the keybag opens at start")
        try harness.expectNoSecretLeaked()
    }

    @Test func homeFilesArePrivate() throws {
        let harness = try Harness.initialized(passcode: "e2e-modes-passcode")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: "wrong-one\n").status == 1)  // writes unlock-attempts

        #expect(try mode(of: harness.paths.home.path) == 0o700)
        let enumerator = FileManager.default.enumerator(atPath: harness.paths.home.path)!
        var checked = 0
        while let relative = enumerator.nextObject() as? String {
            let path = harness.paths.home.appendingPathComponent(relative).path
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            #expect(try mode(of: path) == (isDirectory.boolValue ? 0o700 : 0o600), "\(relative)")
            checked += 1
        }
        #expect(checked >= 5, "device.key, keybag, unlock-attempts, logs/, tresord.log at least")
        #expect(try mode(of: harness.paths.runtimeDirectory.path) == 0o700)
        #expect(try mode(of: harness.paths.socket.path) == 0o600)
        try harness.expectNoSecretLeaked()
    }
}
