import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorSecurity
import TresorTestSupport

/// docs/SECURITY.md, "Durability": a home on a full disk refuses every write in one sentence —
/// from the CLI, TresorKit, SecItem, the Secret Service and the web API alike — keeps everything
/// it acknowledged before, and writes again as soon as space is freed. The home lives on a
/// small tmpfs, filled to the last byte by a file the test then removes.
@Suite(.blocksItsThread, .serialized) struct DiskFullTests {
    static let words = "the disk is full: nothing was changed; free space and try again"
    static let passcode = "e2e-disk-full-passcode"

    @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
    func everyCLIAndWebWriteSaysTheDiskIsFullAndResumesOnceSpaceIsFreed() throws {
        let disk = try Tmpfs(size: "3m")
        defer { disk.unmount() }
        let harness = try Harness(base: disk.mountPoint.path)
        defer { harness.stopDaemon() }
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let add = { (service: String) in
            try harness.tresor(["item", "add", "--service", service, "--account", "ada", "--secret-stdin"], input: "secret of \(service)")
        }
        try expectSucceeded(add("full.kept"))
        let kept = try harness.json(NoteSummary.self, ["note", "new", "--title", "kept", "--body-stdin"], input: "kept body")
        let picture = harness.root.appendingPathComponent("picture.bin")
        try Data(repeating: 3, count: 20_000).write(to: picture)
        let attach = ["note", "attach", kept.id, "--kind", "file", "--file", picture.path, "--name", "picture.bin"]
        try expectSucceeded(harness.tresor(attach))
        var browser = WebBrowser(server)
        let webPassword = "e2e-disk-full-web-password"
        harness.secrets.append(webPassword)
        #expect(try browser.register("alice", webPassword).status == 201)
        let webNote = try browser.createNote(title: "web", body: "web body")
        let detail = try #require(try browser.get("/api/notes/\(webNote)").json)
        let revision = try #require((detail["summary"] as? [String: Any])?["revision"] as? Int)
        let base: [String: Any] = ["revision": revision, "title": "web", "body": "web body"]

        let filler = try disk.fill()
        let refusals: [(String, Harness.Result)] = [
            ("item add", try add("full.refused")),
            ("note new", try harness.tresor(["note", "new", "--title", "refused", "--body-stdin"], input: "refused body")),
            ("note edit", try harness.tresor(["note", "edit", kept.id, "--body-stdin"], input: "refused edit")),
            ("note attach", try harness.tresor(attach)),
            (
                "passcode change",
                try harness.tresor(
                    ["passcode", "change", "--passcode-stdin"], input: "\(Self.passcode)\n\(Self.passcode)-2\n\(Self.passcode)-2\n")
            ),
        ]
        for (operation, result) in refusals {
            #expect(!result.succeeded && result.stderr.contains(Self.words), "\(operation): \(result.stdout)\(result.stderr)")
        }
        let saved = try browser.patch("/api/notes/\(webNote)", ["body": "web edit", "base": base])
        #expect(saved.status == 507 && saved.code == "diskFull" && saved.json?["message"] as? String == Self.words, "web save: \(saved.text)")
        // A backup that does not fit is refused before it starts, and leaves no file.
        let backup = disk.mountPoint.appendingPathComponent("home.age")
        let backupPassphrase = "e2e-disk-full-backup-passphrase"
        harness.secrets.append(backupPassphrase)
        let createBackup = {
            try harness.tresor(
                ["backup", "create", "--out", backup.path, "--work-factor", "14", "--passcode-stdin"],
                input: "\(Self.passcode)\n\(backupPassphrase)\n\(backupPassphrase)\n")
        }
        let created = try createBackup()
        #expect(!created.succeeded && created.stderr.contains(Self.words), "backup create: \(created.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.mountPoint.path).allSatisfy { !$0.hasPrefix("home.age") })

        // Nothing acknowledged is lost, also across a restart on the full disk.
        harness.killDaemon()
        try harness.startDaemon(extraArguments: ["--web", "\(server.port)"])
        try expectSucceeded(harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n"))
        try expectKept(harness, kept.id)

        try FileManager.default.removeItem(at: filler)
        try expectSucceeded(add("full.after"))
        try expectSucceeded(harness.tresor(["note", "edit", kept.id, "--body-stdin"], input: "edited after"))
        try expectSucceeded(harness.tresor(attach))
        // The restart ended the browser's session: sign in again.
        #expect(try browser.signIn("alice", webPassword).status == 200)
        let resaved = try browser.patch("/api/notes/\(webNote)", ["body": "web edit", "base": base])
        #expect(resaved.status == 200, "web save: \(resaved.text)")
        try expectSucceeded(createBackup())
        #expect(
            !(try harness.tresor(["item", "get", "--service", "full.refused", "--passcode-stdin"], input: Self.passcode + "\n").succeeded),
            "a refused item is there")
    }

    @Test(.enabled(if: Tmpfs.canMount && SecretService.toolsInstalled, "needs root, dbus-daemon and secret-tool"))
    func secretToolIsToldTheDiskIsFull() throws {
        let disk = try Tmpfs(size: "3m")
        defer { disk.unmount() }
        let provider = try TresorProvider(base: disk.mountPoint.path)
        defer { provider.harness.stopDaemon() }
        let tool = provider.secretTool
        let (kept, refused, after) = (provider.marker("ss-kept"), provider.marker("ss-refused"), provider.marker("ss-after"))
        try tool.store(label: "kept", ["tresor-e2e": "full", "n": "1"], secret: kept)

        let filler = try disk.fill()
        let stored = try tool.run(["store", "--label=refused", "tresor-e2e", "full", "n", "2"], input: refused)
        #expect(!stored.succeeded && stored.stderr.contains(Self.words), "secret-tool store: \(stored.stderr)")
        #expect(try tool.lookup(["tresor-e2e": "full", "n": "1"], expecting: kept) == kept)

        try FileManager.default.removeItem(at: filler)
        try tool.store(label: "after", ["tresor-e2e": "full", "n": "3"], secret: after)
        #expect(try tool.lookup(["tresor-e2e": "full", "n": "3"], expecting: after) == after)
        #expect(try tool.lookup(["tresor-e2e": "full", "n": "2"]) == nil)
    }

    func expectKept(_ harness: Harness, _ note: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let item = try harness.tresor(["item", "get", "--service", "full.kept", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(item.succeeded && item.stdout.contains("secret of full.kept"), "\(item.stderr)", sourceLocation: sourceLocation)
        let shown = try harness.tresor(["note", "show", note])
        #expect(shown.succeeded && shown.stdout.contains("kept body"), "\(shown.stderr)", sourceLocation: sourceLocation)
    }
}

/// TresorKit and SecItem on a full disk: a typed `APIError` with code `diskFull`, and
/// `errSecDiskFull`. In `SecItemTests`' suite, which owns the process-wide SecItem keychain.
extension SecItemTests {
    @Test(.enabled(if: Tmpfs.canMount, "mounting a tmpfs needs root"))
    func aFullDiskIsErrSecDiskFullAndATypedTresorKitError() throws {
        let disk = try Tmpfs(size: "3m")
        defer { disk.unmount() }
        let harness = try Harness(base: disk.mountPoint.path)
        defer { harness.stopDaemon() }
        harness.secrets = [Self.passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        try harness.registerTestRunner(id: "TESTS.secitem", team: "TESTS", passcode: Self.passcode)
        let keychain = Keychain(client: try TresorKitClient.connect(harness))
        SecItemKeychain.use(keychain)
        #expect(add(password(account: "kept")) == errSecSuccess)

        let filler = try disk.fill()
        #expect(add(password(account: "refused")) == errSecDiskFull)
        do {
            _ = try keychain.add(.genericPassword(service: "kit.example.com", account: "refused"), secret: Data("s".utf8))
            Issue.record("TresorKit acknowledged an item on a full disk")
        } catch let error as APIError {
            #expect(error.code == .diskFull && error.osStatus == errSecDiskFull && error.message == DiskFullTests.words)
        }
        #expect(copy(password(account: "kept")).0 == errSecSuccess)

        try FileManager.default.removeItem(at: filler)
        #expect(add(password(account: "refused")) == errSecSuccess)
    }
}

/// A tmpfs mounted at a new folder under /tmp (root only), for homes on a small or read-only disk.
/// Unmounted by ``unmount()`` — call it in a `defer` — or at the latest when released.
final class Tmpfs {
    static var canMount: Bool { getuid() == 0 }
    let mountPoint: URL
    private var mounted = false

    /// - Parameters:
    ///   - size: mount's `size=` (`3m`).
    ///   - mountPoint: where (created, with its parents); a new folder under /tmp by default.
    init(size: String, at mountPoint: URL? = nil) throws {
        self.mountPoint = mountPoint ?? URL(fileURLWithPath: "/tmp/tresor-tmpfs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: self.mountPoint, withIntermediateDirectories: true)
        try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(size),mode=700", "tmpfs", self.mountPoint.path])
        mounted = true
    }

    deinit { unmount() }

    /// Remounts it read-only or read-write; what is on it stays.
    func remount(readOnly: Bool) throws {
        try Self.run("/usr/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", mountPoint.path])
    }

    /// Writes a file until the disk has no byte left; returns it (remove it to free the space).
    func fill() throws -> URL {
        let filler = mountPoint.appendingPathComponent("filler")
        let fd = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TmpfsError.failed("open \(filler.path): errno \(errno)") }
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5a, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        guard errno == ENOSPC else { throw TmpfsError.failed("filling \(mountPoint.path) stopped with errno \(errno)") }
        var rest: UInt8 = 0
        while write(fd, &rest, 1) > 0 {}
        return filler
    }

    /// Unmounts (lazily, should a process still hold a file there) and removes the folder.
    func unmount() {
        guard mounted else { return }
        mounted = false
        try? Self.run("/usr/bin/umount", ["-l", mountPoint.path])
        rmdir(mountPoint.path)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilEnded()
        guard process.terminationStatus == 0 else { throw TmpfsError.failed("\(executable) \(arguments.joined(separator: " ")) failed") }
    }
}

enum TmpfsError: Error {
    case failed(String)
}
