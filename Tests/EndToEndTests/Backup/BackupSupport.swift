import Foundation
import NoteStoreFixture
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A home filled with one of everything a backup carries, through the real CLI (and the web API
/// for a web account): items of every class × protection class, a user-presence item, notes in a
/// folder, pinned, locked with the notes passphrase, imported still locked from Apple Notes, with
/// attachments (one locked, one left out of backups), a web account with a note of its own.
///
/// Every secret, title, body and attachment holds ``marker``, so one search finds any of them.
final class BackupHome {
    static let marker = "bk-marker-"
    let harness: Harness
    let passcode: String
    let notesPassphrase: String
    let backupPassphrase: String
    let web: WebServerAddress?

    /// Class × protection class → the secret added.
    private(set) var secrets: [String: String] = [:]
    private(set) var noteIDs: [String: String] = [:]
    private(set) var bodies: [String: String] = [:]
    private(set) var attachmentBytes: [String: Data] = [:]
    private(set) var attachmentIDs: [String: String] = [:]

    /// - Parameters:
    ///   - web: whether the daemon serves the web client too (a web account is then made).
    ///   - user: another user to run the daemon and every client as (``Harness/user``).
    ///   - configuration: the home's config.json, if any.
    init(web: Bool = false, name: String = "a", user: TestUser? = nil, configuration: String? = nil) throws {
        harness = try Harness(configuration: configuration, user: user)
        let tag = UUID().uuidString.prefix(8)
        passcode = "bk-passcode-\(name)-\(tag)"
        notesPassphrase = "bk-passphrase-\(tag)"
        backupPassphrase = "bk-backup-passphrase-\(tag)"
        harness.secrets = [passcode, notesPassphrase, backupPassphrase]
        if web {
            self.web = try harness.startWebDaemon(passcode: passcode)
        } else {
            self.web = nil
            try harness.startDaemon()
            try expectSucceeded(harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n"))
        }
    }

    /// A marker-bearing text: `bk-marker-<what>-<random>`.
    func marked(_ what: String) -> String { "\(Self.marker)\(what)-\(UUID().uuidString.prefix(8))" }

    // MARK: Items

    static let itemClasses: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// One item of every class in every protection class, and a user-presence item.
    func addEveryItem() throws {
        let der = try Self.certificateDER(in: harness.root)
        // Outside the home (which the tests search for markers), private to the test.
        let passcodeFile = harness.root.appendingPathComponent("passcode")
        try Data((passcode + "\n").utf8).write(to: passcodeFile)
        chmod(passcodeFile.path, 0o600)
        for itemClass in Self.itemClasses {
            for protectionClass in ProtectionClass.allCases {
                let key = "\(itemClass.rawValue)/\(protectionClass.rawValue)"
                var arguments = ["item", "add", "--class", itemClass.rawValue, "--accessible", protectionClass.rawValue, "--secret-stdin"]
                let secret: String
                switch itemClass {
                case .genericPassword:
                    arguments += ["--service", "bk.\(protectionClass.rawValue)", "--account", "ada", "--label", marked("label")]
                    secret = marked("secret")
                case .internetPassword:
                    arguments += [
                        "--server", "\(protectionClass.rawValue.lowercased()).example.com", "--protocol", "https", "--port", "443", "--account",
                        "ada",
                    ]
                    secret = marked("secret")
                case .certificate:
                    // One certificate in a group per class: its primary key is the certificate's.
                    arguments += ["--group", "bk.\(protectionClass.rawValue)"]
                    secret = ""
                case .key:
                    arguments += [
                        "--key-class", "private", "--key-type", "ec", "--key-size", "256", "--application-tag", "bk.\(protectionClass.rawValue)",
                    ]
                    secret = marked("key")
                }
                if itemClass == .certificate {
                    // A group not the tresor tool's own: adding to it needs the passcode (fd 3).
                    try expectSucceeded(
                        harness.run(
                            URL(fileURLWithPath: "/bin/sh"),
                            [
                                "-c", "exec \"$0\" \"$@\" < \(der.path) 3< \(passcodeFile.path)",
                                Harness.binaries.appendingPathComponent("tresor").path,
                            ]
                                + arguments + ["--passcode-fd", "3"]))
                    secrets[key] = try Data(contentsOf: der).base64EncodedString()
                } else {
                    try expectSucceeded(harness.tresor(arguments, input: secret))
                    secrets[key] = secret
                }
            }
        }
        let presence = marked("presence-secret")
        try expectSucceeded(
            harness.tresor(["item", "add", "--service", "bk.presence", "--account", "ada", "--user-presence", "--secret-stdin"], input: presence))
        secrets["presence"] = presence
    }

    /// Every item of every class, attributes and secrets (the passcode given for those of other
    /// groups and of user presence), by `class/protection class`.
    func items() throws -> [String: KeychainItem] {
        var all: [String: KeychainItem] = [:]
        for itemClass in Self.itemClasses {
            let result = try harness.tresor(
                ["item", "find", "--class", itemClass.rawValue, "--show-secrets", "--passcode-stdin", "--json"], input: passcode + "\n")
            guard result.succeeded else { continue }  // none of that class
            for item in try CLIJSON.decode([KeychainItem].self, from: Data(result.stdout.utf8)) {
                let attributes = try #require(item.attributes)
                let key = attributes.service == "bk.presence" ? "presence" : "\(itemClass.rawValue)/\(attributes.accessible!.rawValue)"
                all[key] = item
            }
        }
        return all
    }

    /// The secret of `item` as ``secrets`` holds it.
    static func secretText(_ item: KeychainItem) -> String? {
        guard let secret = item.secret else { return nil }
        return item.itemClass == .certificate ? secret.base64EncodedString() : String(decoding: secret, as: UTF8.self)
    }

    /// A certificate from the system's store, as DER, written into `folder` (one whose last byte
    /// is no line end, which `--secret-stdin` would take off).
    static func certificateDER(in folder: URL) throws -> URL {
        for pem in try FileManager.default.contentsOfDirectory(atPath: "/etc/ssl/certs").sorted() where pem.hasSuffix(".pem") {
            let text = try String(contentsOfFile: "/etc/ssl/certs/\(pem)", encoding: .utf8)
            let body = text.components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined()
            guard let der = Data(base64Encoded: body), der.last != 0x0A, der.last != 0x0D else { continue }
            let url = folder.appendingPathComponent("cert.der")
            try der.write(to: url)
            return url
        }
        throw HarnessError.timedOut("no usable certificate in /etc/ssl/certs", after: 0)
    }

    // MARK: Notes

    /// The notes passphrase; an unlocked note pinned in a folder with an attachment; a locked
    /// note with a locked attachment; an attachment left out of backups; Apple-imported notes
    /// (locked with Apple's passphrase "password").
    func addNotes() throws {
        try expectSucceeded(harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(notesPassphrase)\n\(notesPassphrase)\n"))
        let plain = try newNote("plain", folder: "Personal", pin: true)
        let locked = try newNote("locked")
        try attach("plain-attachment", to: plain, kind: "file", size: 1_500_000)
        try attach("locked-attachment", to: locked, kind: "image", size: 2_300_000)
        try attach("excluded-attachment", to: plain, kind: "file", size: 10_000, excluded: true)
        try expectSucceeded(harness.tresor(["note", "lock", locked]))
        try importAppleNotes()
    }

    @discardableResult
    func newNote(_ name: String, folder: String? = nil, pin: Bool = false) throws -> String {
        let title = marked("title-\(name)"), body = marked("body-\(name)")
        var arguments = ["note", "new", "--title", title, "--body-stdin", "--json"]
        if let folder { arguments += ["--folder", folder] }
        if pin { arguments.append("--pin") }
        let note = try harness.json(NoteSummary.self, arguments, input: body)
        noteIDs[name] = note.id
        bodies[name] = body
        return note.id
    }

    /// A note with an attachment of `mebibytes` MiB named `large.bin`: enough that a backup,
    /// a verification or a restore of it lasts long enough to be watched, or interrupted.
    func noteWithALargeAttachment(_ name: String, mebibytes: Int) throws {
        let note = try newNote(name)
        let large = harness.root.appendingPathComponent("large.bin")
        try Data(repeating: 0x5a, count: mebibytes << 20).write(to: large)
        try expectSucceeded(harness.tresor(["note", "attach", note, "--kind", "file", "--file", large.path, "--name", "large.bin"]))
    }

    func attach(_ name: String, to note: String, kind: String, size: Int, excluded: Bool = false) throws {
        var bytes = Data(marked(name).utf8)
        bytes.append(Data((0..<(size - bytes.count)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }))
        let file = harness.root.appendingPathComponent(name)
        try bytes.write(to: file)
        var arguments = ["note", "attach", note, "--kind", kind, "--file", file.path, "--name", name, "--json"]
        if excluded { arguments.append("--exclude-from-backup") }
        let info = try harness.json(AttachmentInfo.self, arguments)
        attachmentBytes[name] = bytes
        attachmentIDs[name] = info.id
    }

    /// Apple Notes' two known locked vectors and an unlocked note, imported.
    func importAppleNotes() throws {
        var fixture = NoteStoreFixture(schema: .newer)
        let account = fixture.addAccount(name: "iCloud")
        let vault = fixture.addFolder(title: "Vault", account: account)
        _ = try fixture.addNote(
            .init(
                title: "Encrypted title", body: .locked(.fullNoteVector(hint: "the usual word")), folder: vault, account: account,
                created: 700_000_300))
        let url = harness.root.appendingPathComponent("NoteStore.sqlite")
        try fixture.write(to: url)
        try expectSucceeded(harness.tresor(["import", "apple-notes", url.path]))
    }

    /// The notes as listed, by title.
    func notes() throws -> [String: NoteSummary] {
        Dictionary(uniqueKeysWithValues: try harness.json([NoteSummary].self, ["note", "list"]).map { ($0.title, $0) })
    }

    // MARK: Backups

    /// The arguments of `tresor backup create --out PATH` (`-`: standard output) with the
    /// passcode on standard input, and that input: the passcode, then the passphrase twice.
    func createCommand(out path: String, workFactor: Int = 14) -> (arguments: [String], input: String) {
        (
            ["backup", "create", "--out", path, "--work-factor", "\(workFactor)", "--passcode-stdin"],
            "\(passcode)\n\(backupPassphrase)\n\(backupPassphrase)\n"
        )
    }

    /// `tresor backup create` with the passcode and passphrase on standard input.
    func backup(to url: URL, workFactor: Int = 14) throws -> BackupReport {
        let create = createCommand(out: url.path, workFactor: workFactor)
        let result = try harness.tresor(create.arguments + ["--json"], input: create.input)
        try expectSucceeded(result)
        return try CLIJSON.decode(BackupReport.self, from: Data(result.stdout.utf8))
    }

    /// `tresor backup restore` of `url` (made with `passphrase`) into this home; its report when
    /// it ran (exit status 0, or 2: something left out for now).
    func restore(_ url: URL, passphrase: String, arguments: [String] = []) throws -> (Harness.Result, BackupReport?) {
        let result = try harness.tresor(
            ["backup", "restore", url.path, "--passcode-stdin", "--json"] + arguments, input: "\(passcode)\n\(passphrase)\n")
        let ran = result.status == 0 || result.status == 2
        return (result, ran ? try CLIJSON.decode(BackupReport.self, from: Data(result.stdout.utf8)) : nil)
    }

    /// The files of `snapshot` and `other` that differ (for a failure's message).
    static func differences(_ snapshot: [String: Data], _ other: [String: Data]) -> [String] {
        Set(snapshot.keys).union(other.keys).filter { snapshot[$0] != other[$0] }.sorted()
    }

    /// The home's files as `Harness.homeSnapshot()` compares them.
    func homeSnapshot() throws -> [String: Data] { try harness.homeSnapshot() }
}

/// Fails the test with the command's output when it did not succeed.
func expectSucceeded(_ result: Harness.Result, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try #require(result.succeeded, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
}

/// Debian's `age`, which reads passphrases only from a terminal: run under a Python pty that
/// types the passphrase at each prompt (it reaches Python on standard input, never a command line).
enum AgeCommand {
    static let path = "/usr/bin/age"
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// Runs `age arguments`, answering its passphrase prompts with `passphrase`.
    static func run(_ arguments: [String], passphrase: String) throws {
        let screen = try Terminal.run([path] + arguments, prompts: [Terminal.Prompt(endingWith: ":", containing: "passphrase", send: passphrase)])
        guard screen.status == 0 else {
            throw HarnessError.timedOut("age failed: \(screen.text.suffix(300))", after: 0)
        }
    }
}

/// Starts `executable` with `arguments` in `environment`, its input written and closed, its
/// output discarded — standard error goes to `standardError` when one is given.
func startWithInput(
    _ executable: URL, _ arguments: [String], input: String, environment: [String: String], standardError: Pipe? = nil
) throws -> Process {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    let stdin = Pipe()
    process.standardInput = stdin
    process.standardOutput = FileHandle.nullDevice
    process.standardError = standardError ?? FileHandle.nullDevice
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
    return process
}

/// A home to restore into, with a note and an item of its own, its daemon started as the crash
/// driver starts it and the driver's CLI that starts none.
final class CrashTarget {
    let harness: Harness
    let daemon: TestDaemon
    let cli: URL
    let environment: [String: String]
    let passcode = "bk-crash-passcode-\(UUID().uuidString.prefix(8))"
    let passphrase: String

    /// - Parameter powerCut: whether the home is on a ``PowerCutDisk``, its power cut with every kill.
    init(passphrase: String, secrets: [String], powerCut: Bool = false) throws {
        harness = try Harness(configuration: #"{"autoLockSeconds": 0}"#, onPowerCutDisk: powerCut)
        harness.secrets = secrets + [passcode, passphrase]
        self.passphrase = passphrase
        daemon = TestDaemon(harness)
        (cli, environment) = try CrashDriver.cliThatStartsNoDaemon(harness)
        try daemon.start()
        try expectSucceeded(tresor(["init", "--passcode-stdin"], input: passcode + "\n"))
        try expectSucceeded(tresor(["item", "add", "--service", "own", "--account", "me", "--secret-stdin"], input: "own-secret"))
        try expectSucceeded(tresor(["note", "new", "--title", "own", "--body-stdin"], input: "own body"))
    }

    /// The passcode and the backup passphrase, as `--passcode-stdin` reads them.
    var secretsInput: String { "\(passcode)\n\(passphrase)\n" }

    func tresor(_ arguments: [String], input: String = "") throws -> Harness.Result {
        try harness.run(cli, arguments, input: input, environment: environment)
    }

    /// The ids of the generic passwords and of the notes.
    func state() throws -> (items: Set<String>, notes: Set<String>) {
        let items = try CLIJSON.decode([KeychainItem].self, from: Data(try tresor(["item", "find", "--json"]).stdout.utf8))
        let notes = try CLIJSON.decode([NoteSummary].self, from: Data(try tresor(["note", "list", "--json"]).stdout.utf8))
        return (Set(items.map(\.id)), Set(notes.map(\.id)))
    }

    /// How long a dry run of restoring `file` takes, times 1.6: the window the cuts of a restore
    /// are spread over.
    func restoreWindow(_ file: URL) throws -> TimeInterval {
        let rehearsal = Date()
        try expectSucceeded(tresor(["backup", "restore", file.path, "--passcode-stdin", "--dry-run"], input: secretsInput))
        return Date().timeIntervalSince(rehearsal) * 1.6
    }

    /// The check after a restore cut short, once the daemon is started again: unlocked, the home
    /// is the fully restored one (`full`) or the one before (`untouched`), never in between; an
    /// `acknowledged` restore is whole; and a restored home holds `source`'s attachment `big-0`
    /// byte for byte (the attachments moved in with their notes).
    /// - Parameters:
    ///   - untouched: the ids the home held before the restore.
    ///   - full: those and the backup's.
    ///   - acknowledged: whether the CLI reported the restore done.
    ///   - source: the backed-up home, with its note `note-0` and attachment `big-0`.
    ///   - round: which cut this was, for the failure's message.
    /// - Returns: whether the home is the restored one.
    func expectRestoredOrUntouched(
        untouched: (items: Set<String>, notes: Set<String>), full: (items: Set<String>, notes: Set<String>), acknowledged: Bool,
        source: BackupHome, _ round: String
    ) throws -> Bool {
        try expectSucceeded(tresor(["unlock", "--passcode-stdin"], input: passcode + "\n"))
        let after = try state()
        let restored = after.items == full.items && after.notes == full.notes
        let asBefore = after.items == untouched.items && after.notes == untouched.notes
        #expect(restored || asBefore, "\(round): in between (\(after.items.count) items, \(after.notes.count) notes)")
        if acknowledged { #expect(restored, "\(round): the restore was acknowledged, so it must be whole") }
        if restored {
            let out = harness.root.appendingPathComponent("big-0")
            try expectSucceeded(
                tresor([
                    "note", "export-attachment", try #require(source.noteIDs["note-0"]), try #require(source.attachmentIDs["big-0"]), "--out",
                    out.path,
                ]))
            #expect(try Data(contentsOf: out) == source.attachmentBytes["big-0"], "\(round): the attachment came back byte for byte")
        }
        return restored
    }

    /// Starts the CLI with `arguments`, its input written and closed.
    func start(_ arguments: [String], input: String) throws -> Process {
        try startWithInput(cli, arguments, input: input, environment: environment)
    }

    /// Runs a restore of `file` and SIGKILLs the daemon `delay` seconds after the CLI started — or,
    /// `atCommit`, after the staging area's commit marker appeared.
    func restoreKillingTheDaemon(_ file: URL, after delay: TimeInterval, atCommit: Bool) throws -> Harness.Result {
        let process = try start(["backup", "restore", file.path, "--passcode-stdin"], input: secretsInput)
        if atCommit {
            let marker = harness.paths.home.appendingPathComponent("restore-staging/commit").path
            let deadline = Date().addingTimeInterval(60)
            while access(marker, F_OK) != 0 && process.isRunning && Date() < deadline { usleep(100) }
        }
        usleep(useconds_t(delay * 1_000_000))
        daemon.kill()
        try harness.disk?.cutPower()
        process.waitUntilEnded()
        return Harness.Result(status: process.terminationStatus, stdout: "", stderr: "")
    }
}
