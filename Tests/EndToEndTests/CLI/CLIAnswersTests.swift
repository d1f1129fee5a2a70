import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// One answer or an error (notes named by an ambiguous prefix are
/// refused), and failures in plain words — with the codes kept for `--json` and `--verbose`.
@Suite(.blocksItsThread, .serialized) struct CLIAnswersTests {
    static let passcode = "e2e-answers-passcode"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    /// A note named by a start of its id that other notes' ids share is refused with the
    /// candidates; a unique start, a whole id and an exact title each name one note.
    @Test func notesAreNamedByAUniqueIdPrefixOrTheirTitleAndAnAmbiguousPrefixIsRefused() throws {
        let harness = try initialized()
        var notes: [NoteSummary] = []
        // Ids are random: make notes until two share a first character.
        while !notes.contains(where: { note in notes.contains { $0.id != note.id && $0.id.first == note.id.first } }) {
            notes.append(try harness.json(NoteSummary.self, ["note", "new"], input: "Note \(notes.count)\nBody of note \(notes.count)\n"))
        }
        let twin = notes.first { note in notes.contains { $0.id != note.id && $0.id.first == note.id.first } }!
        let sharing = notes.filter { $0.id.first == twin.id.first }
        let ambiguous = try harness.tresor(["note", "show", String(twin.id.prefix(1))])
        #expect(ambiguous.status == 1 && ambiguous.stdout.isEmpty)
        #expect(ambiguous.stderr.contains("\(sharing.count) notes match"), "\(ambiguous.stderr)")
        for candidate in sharing { #expect(ambiguous.stderr.contains(candidate.id) && ambiguous.stderr.contains(candidate.title)) }
        #expect(try harness.json(ErrorResponse.self, ["note", "delete", String(twin.id.prefix(1))]).error.code == .param)
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).count == notes.count, "an ambiguous delete deleted nothing")

        let unique = notes.map { note in
            (note, (1...36).map { String(note.id.prefix($0)) }.first { prefix in notes.filter { $0.id.hasPrefix(prefix) }.count == 1 }!)
        }
        for (note, prefix) in unique {
            #expect(try harness.tresor(["note", "show", prefix]).stdout.contains("Body of \(note.title.lowercased())"))
            #expect(try harness.tresor(["note", "show", note.title]).stdout.contains("id: \(note.id)"))
            #expect(try harness.tresor(["note", "show", note.id.uppercased()]).succeeded, "a whole id, any case")
        }
        let missing = try harness.tresor(["note", "show", "zz-no-such-note"])
        #expect(missing.status == 1 && missing.stderr.contains("no note's id starts with 'zz-no-such-note'"))
        // A title two notes share is ambiguous too.
        _ = try harness.json(NoteSummary.self, ["note", "new"], input: "Note 0\nA second note 0\n")
        #expect(try harness.tresor(["note", "show", "Note 0"]).stderr.contains("2 notes match"))
        // A title given on standard input — kept off the command line — is not echoed in the
        // error either, nor are the candidates' titles: their ids and dates tell them apart.
        let twins = try harness.tresor(["note", "show", "-"], input: "Note 0\n")
        #expect(twins.stderr.contains("2 notes match the text given"), "\(twins.stderr)")
        #expect(!twins.stderr.contains("Note 0") && twins.stderr.contains("changed 20"), "\(twins.stderr)")
        let unknown = try harness.tresor(["note", "show", "-"], input: "Dentist appointment\n")
        #expect(unknown.stderr.contains("no note's id starts with the text given"), "\(unknown.stderr)")
        #expect(!unknown.stderr.contains("Dentist"))
    }

    /// A `--home` that does not exist — a typo — is refused by every command but `init`, and
    /// nothing is made there: no folder, no daemon left running.
    @Test func aMistypedHomeIsRefusedAndNothingIsMadeThere() throws {
        let harness = try initialized()
        let typo = harness.root.appendingPathComponent("hmoe")
        for arguments in [["status"], ["item", "find"], ["note", "list"], ["keychain", "list"]] {
            let refused = try harness.tresor(["--home", typo.path] + arguments)
            #expect(refused.status == 1 && refused.stderr.contains("no Tresor home at \(typo.path)"), "\(arguments): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: typo.path))
        let made = try harness.tresor(["--home", typo.path, "init", "--passcode-stdin"], input: "e2e-typo-passcode\n")
        #expect(made.succeeded && FileManager.default.fileExists(atPath: typo.path), "\(made.stderr)")
        #expect(try harness.tresor(["--home", typo.path, "status"]).succeeded)
        #expect(try harness.tresor(["--home", typo.path, "daemon", "stop"]).succeeded)
    }

    /// An empty `--home` — a script's variable left unset — would name `$TRESOR_HOME` or the
    /// default home, the user's real one; one naming a file is no home either. Both are refused
    /// by every command, `init` and the secret lookup scripts run too, and by `tresord`.
    @Test func anEmptyHomeOrAFileIsRefusedAndNoOtherHomeIsUsed() throws {
        let harness = try initialized()
        let file = harness.root.appendingPathComponent("a-file")
        try Data("not a home".utf8).write(to: file)
        for (home, said) in [("", "--home is empty"), (file.path, "\(file.path) is a file, not a Tresor home")] {
            for arguments in [["status"], ["item", "get", "--service", "s"], ["note", "list"], ["init", "--no-passcode"], ["daemon", "logs"]] {
                let refused = try harness.tresor(["--home", home] + arguments)
                #expect(refused.status != 0 && refused.stderr.contains(said), "\(home) \(arguments): \(refused.stderr)")
            }
            // The daemon too: the last --home given is the one taken.
            let daemon = try harness.run(harness.binaries.appendingPathComponent("tresord"), ["--home", home], timeout: 30)
            #expect(daemon.status != 0 && daemon.stderr.contains(said), "tresord --home \(home): \(daemon.stderr)")
        }
        #expect(try Data(contentsOf: file) == Data("not a home".utf8))
    }

    /// A title, a folder or an attachment name is one line: a line break given in one is
    /// refused, and nothing changes; an empty attachment name is said to be one.
    @Test func namesShownOnOneLineAreRefusedWithALineBreak() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Groceries\nmilk\n")
        let retitled = try harness.tresor(["note", "edit", note.id, "--title", "Line1\nLine2"])
        #expect(retitled.status != 0 && retitled.stderr.contains("the new title is one line"), "\(retitled.stderr)")
        let made = try harness.tresor(["note", "new", "--title", "A\rB", "--body-stdin"], input: "body")
        #expect(made.status != 0 && made.stderr.contains("the title is one line"), "\(made.stderr)")
        let moved = try harness.tresor(["note", "edit", note.id, "--folder", "Work\nHome"])
        #expect(moved.status != 0 && moved.stderr.contains("the folder is one line"), "\(moved.stderr)")
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).map(\.title) == ["Groceries"])
        let file = harness.root.appendingPathComponent("blob.bin")
        try Data("blob".utf8).write(to: file)
        let unnamed = try harness.tresor(["note", "attach", note.id, "--kind", "file", "--file", file.path, "--name", "-"], input: "\n")
        #expect(unnamed.status != 0 && unnamed.stderr.contains("the attachment name is empty"), "\(unnamed.stderr)")
        #expect(!unnamed.stderr.contains("header"))
    }

    /// A folder's name read off the terminal or standard input is not echoed in an error, as a
    /// note's title is not: the daemon's message says "(the name given)", in `--json` too.
    @Test func aFolderNameGivenOffTheCommandLineIsNotEchoedInErrors() throws {
        let harness = try initialized()
        let missing = try harness.tresor(["note", "list", "--folder", "-"], input: "Secret Folder\n")
        #expect(missing.status == 1 && !missing.stderr.contains("Secret Folder"), "\(missing.stderr)")
        #expect(missing.stderr.contains("(the name given)"), "\(missing.stderr)")
        _ = try harness.json(NoteSummary.self, ["note", "new", "--folder", "-", "--body-stdin"], input: "Hidden Work\nA note\nbody")
        let full = try harness.tresor(["note", "folder", "delete", "--json"], input: "Hidden Work\n")
        #expect(full.status == 1 && !full.stdout.contains("Hidden Work") && full.stdout.contains("(the name given)"), "\(full.stdout)")
        // Given on the command line, it was never confidential: said as given.
        let named = try harness.tresor(["note", "list", "--folder", "Plain Folder"])
        #expect(named.stderr.contains("Plain Folder"), "\(named.stderr)")
        // A folder there already is said to be, not "created" again.
        let again = try harness.tresor(["note", "folder", "create", "-"], input: "Hidden Work\n")
        #expect(again.status == 1 && again.stderr.contains("folder (the name given) exists already"), "\(again.stderr)")
    }

    /// A secret over the item limit is refused before it is sent, saying the limit — not that
    /// the request is too large — and so is an empty one read from standard input.
    @Test func aSecretTooLargeOrEmptyIsRefusedSayingWhy() throws {
        let harness = try initialized()
        for size in [300 * 1024, 900 * 1024] {
            let big = try harness.tresor(["item", "add", "--service", "big", "--secret-stdin"], input: String(repeating: "a", count: size))
            #expect(big.status != 0 && big.stderr.contains("the secret is \(size) bytes; an item holds at most 256 KB"), "\(big.stderr)")
        }
        let keyless = try harness.tresor(["item", "add", "--service", "attr", "--attribute", "=empty", "--secret-stdin"], input: "x")
        #expect(keyless.status != 0 && keyless.stderr.contains("key=value with a key"), "\(keyless.stderr)")
        let withID = try harness.tresor(["item", "add", "--id", "12345", "--service", "withid", "--secret-stdin"], input: "x")
        #expect(withID.status != 0 && withID.stderr.contains("--id names an item there is"), "\(withID.stderr)")
        let empty = try harness.tresor(["item", "add", "--service", "empty", "--secret-stdin"], input: "")
        #expect(empty.status != 0 && empty.stderr.contains("standard input held no secret"), "\(empty.stderr)")
        #expect(try harness.tresor(["item", "find"]).status != 0, "nothing was added")
    }

    /// What will be refused is refused before a warning about it: a second notes passphrase,
    /// an empty passcode.
    @Test func aRefusalComesBeforeAWarningAboutWhatItRefuses() throws {
        let harness = try initialized()
        #expect(
            try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "e2e-first-passphrase\ne2e-first-passphrase\n").succeeded)
        let again = try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "x\nx\n")
        #expect(again.status == 1 && again.stderr.contains("set already") && !again.stderr.contains("warning"), "\(again.stderr)")
        let fresh = try Harness()
        try fresh.startDaemon()
        let empty = try fresh.tresor(["init", "--passcode-stdin"], input: "\n\n")
        #expect(empty.status != 0 && !empty.stderr.contains("warning"), "\(empty.stderr)")
    }

    /// Errors say what went wrong and what to do, without codes; `--verbose` adds them and
    /// `--json` keeps them.
    @Test func failuresSpeakPlainWordsAndKeepTheirCodesForJSONAndVerbose() throws {
        let fresh = try Harness()
        try fresh.startDaemon()
        let uninitialized = try fresh.tresor(["item", "get", "--service", "x"])
        #expect(uninitialized.stderr == "tresor: this home has no keybag yet — run `tresor init`\n", "\(uninitialized.stderr)")

        // The PAM module's hidden helper speaks as every command does.
        let helper = try fresh.tresor(["pam-helper", "password-changed"], input: "old-password\n")
        #expect(helper.status == 1 && helper.stderr == "tresor: standard input has no line for \"New login password\"\n", "\(helper.stderr)")

        let harness = try initialized()
        #expect(
            try harness.tresor(["item", "add", "--service", "plain.example", "--readable-by-scripts", "--secret-stdin"], input: "plain-secret")
                .succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)
        let locked = try harness.tresor(["item", "get", "--service", "plain.example"])
        #expect(locked.status == 1)
        #expect(locked.stderr == "tresor: the keybag is locked — run `tresor unlock`\n", "\(locked.stderr)")
        for code in ["OSStatus", "-25308", "interactionNotAllowed", "errno"] { #expect(!locked.stderr.contains(code)) }

        let verbose = try harness.tresor(["item", "get", "--service", "plain.example", "--verbose"])
        #expect(
            verbose.stderr.contains("the keybag is locked") && verbose.stderr.contains("code interactionNotAllowed, OSStatus -25308"),
            "\(verbose.stderr)")
        let json = try harness.tresor(["item", "get", "--service", "plain.example", "--json"])
        let error = try CLIJSON.decode(ErrorResponse.self, from: Data(json.stdout.utf8)).error
        #expect(error.code == .interactionNotAllowed)
        #expect(json.stdout.contains("\"osStatus\" : -25308"), "\(json.stdout)")

        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let none = try harness.tresor(["item", "get", "--service", "no.such.example"])
        #expect(
            none.stderr == "tresor: no item matches (`tresor item find` lists the items; items that sync, with `--synchronizable`)\n",
            "\(none.stderr)")
        let duplicate = try harness.tresor(["item", "add", "--service", "plain.example", "--secret-stdin"], input: "again")
        #expect(duplicate.stderr.contains("exists already: change or delete that item first") && !duplicate.stderr.contains("-25299"))
        let readOnly = try harness.tresor(["item", "delete", "--keychain", "System Roots", "--class", "cert", "--all"])
        #expect(
            readOnly.stderr.contains("cannot be changed (System Roots is read-only)") && !readOnly.stderr.contains("-25292"), "\(readOnly.stderr)")
        #expect(try harness.tresor(["keychain", "create", "plainvault", "--passcode-stdin"], input: "vault-\(Self.passcode)\n").succeeded)
        harness.secrets.append("vault-\(Self.passcode)")
        #expect(try harness.tresor(["item", "add", "--keychain", "plainvault", "--service", "v", "--secret-stdin"], input: "v").succeeded)
        #expect(try harness.tresor(["lock", "--keychain", "plainvault"]).succeeded)
        #expect(
            try harness.tresor(["item", "get", "--keychain", "plainvault", "--service", "v"]).stderr
                == "tresor: keychain plainvault is locked — run `tresor unlock --keychain plainvault`\n")
        let wrong = try harness.tresor(["unlock", "--passcode-stdin"], input: "not-the-passcode\n")
        #expect(wrong.stderr.contains("wrong passcode") && !wrong.stderr.contains("OSStatus"))
        #expect(
            try harness.tresor(["note", "passphrase", "hint", "--set", "--passphrase-stdin"], input: "h\n").stderr
                .contains("no notes passphrase is set yet — set one with `tresor note passphrase set`"))

        // Names of values read as words.
        let keychains = try harness.tresor(["keychain", "list"]).stdout
        #expect(keychains.contains("read-only") && !keychains.contains("readOnly"), "\(keychains)")
        #expect(try harness.tresor(["item", "find", "--service", "plain.example"]).stdout.contains("accessible: when unlocked"))
        #expect(
            try harness.tresor(["item", "add", "--service", "words", "--accessible", "after-first-unlock", "--secret-stdin"], input: "w").succeeded,
            "a protection class in words is understood")
        harness.killDaemon()
        try harness.startDaemon()
        let status = try harness.tresor(["status"]).stdout
        #expect(status.components(separatedBy: "since the daemon started").count == 2, "said once: \(status)")
        #expect(!status.contains("lockedSinceStart"))
        #expect(status.contains("Keybag:     locked since the daemon started (passcode set)"), "one pair of parentheses: \(status)")
    }

    /// Arguments are checked before any secret is asked for — a mistyped
    /// path or name fails at once, on a terminal too, and asks nothing.
    /// Every command that names a note takes what `note show` takes — a unique start of its id
    /// too — and the trash's commands look among the notes in Recently Deleted.
    /// With `--json`, a command line that does not parse fails as JSON too, as docs/CLI.md
    /// promises of every failure; `--help` still prints help.
    @Test func aCommandLineThatDoesNotParseFailsAsJSONWithJSON() throws {
        let harness = try Harness()
        let unknown = try harness.tresor(["item", "get", "--bogus", "--json"])
        #expect(unknown.status == 64, "\(unknown.status)")
        let answer = try JSONDecoder().decode(ErrorResponse.self, from: Data(unknown.stdout.utf8))
        #expect(answer.error.code == .param && answer.error.message.contains("--bogus"), "\(answer)")
        let help = try harness.tresor(["item", "get", "--help", "--json"])
        #expect(help.succeeded && help.stdout.contains("USAGE"), "\(help.stdout)")
    }

    @Test func attachmentAndTrashCommandsNameNotesAsShowDoes() throws {
        let harness = try initialized()
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Scans\nbody\n")
        let image = harness.root.appendingPathComponent("scan.png")
        try Data("png".utf8).write(to: image)
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", image.path])
        let prefix = String(note.id.prefix(8))
        #expect(try harness.tresor(["note", "attachment-backup", prefix, attached.id, "--exclude"]).succeeded)
        #expect(try harness.tresor(["note", "detach", prefix, attached.id]).succeeded)
        #expect(try harness.tresor(["note", "delete", prefix]).succeeded)
        // Shown after its move to Recently Deleted: said where it is, and how to bring it back.
        let trashed = try harness.tresor(["note", "show", prefix])
        #expect(trashed.status == 1 && trashed.stderr.contains("note \(note.id) is in Recently Deleted"), "\(trashed.stderr)")
        let restored = try harness.tresor(["note", "trash", "restore", prefix])
        #expect(restored.succeeded, "\(restored.stderr)")
        #expect(try harness.tresor(["note", "delete", note.id]).succeeded)
        let deleted = try harness.tresor(["note", "trash", "delete", prefix])
        #expect(deleted.succeeded && deleted.stdout.contains(note.id), "\(deleted.stderr)")
        let none = try harness.tresor(["note", "trash", "restore", prefix])
        #expect(none.stderr.contains("no note in Recently Deleted"), "\(none.stderr)")
    }

    /// Small answers said right: counts in the singular, the reason a file cannot be read, a
    /// folder given where a file goes refused before any work, a home that has a keybag said so
    /// before a passcode is asked, a passphrase asked to lock a note not called "locked".
    @Test func smallAnswersSayWhatHappened() throws {
        let harness = try initialized()
        let folder = harness.root.appendingPathComponent("a-folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        _ = try harness.json(NoteSummary.self, ["note", "new", "--folder", "Work"], input: "One\nbody\n")
        let held = try harness.tresor(["note", "folder", "delete", "Work"])
        #expect(held.stderr.contains("holds 1 note: move or delete it first"), "\(held.stderr)")
        let note = try harness.json(NoteSummary.self, ["note", "new"], input: "Two\nbody\n")
        let missing = try harness.tresor(["note", "attach", note.id, "--kind", "file", "--file", "/nonexistent/file"])
        #expect(missing.stderr.contains("cannot read /nonexistent/file: No such file or directory"), "\(missing.stderr)")
        let image = harness.root.appendingPathComponent("photo.png")
        try Data("png".utf8).write(to: image)
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", image.path])
        let exported = try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", folder.path, "--force"])
        #expect(exported.stderr.contains("is a folder"), "\(exported.stderr)")
        let backup = try harness.tresor(
            ["backup", "create", "--out", folder.path, "--passphrase-stdin"], input: "e2e backup words\ne2e backup words\n")
        #expect(backup.stderr.contains("is a folder"), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + ".partial"), "refused before any work")
        let again = try harness.run(harness.binaries.appendingPathComponent("tresor"), ["init"], input: "")
        #expect(
            again.stderr.contains("already has a keybag (\(harness.paths.home.path)): tresor unlock opens it"),
            "where, and what next: \(again.stderr)")
        harness.secrets.append("e2e-small-passphrase")
        #expect(
            try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "e2e-small-passphrase\ne2e-small-passphrase\n")
                .succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let lock = try harness.tresor(["note", "lock", note.id])
        #expect(lock.stderr.contains("needs the notes passphrase") && !lock.stderr.contains("is locked"), "\(lock.stderr)")
    }

    @Test func argumentsAreCheckedBeforeAnySecretIsAskedFor() throws {
        let harness = try initialized()
        for (arguments, complaint) in [
            (
                ["app", "register", "--id", "TEAMX.app", "--team", "TEAMX", "--exe", "/usr/local/bin/no-such-backup"],
                "no executable file at /usr/local/bin/no-such-backup"
            ),
            (["secret-service", "allow", "--exe", "/no/such/program", "--owner", "/usr/bin/secret-tool"], "no executable file at /no/such/program"),
            (["keychain", "create", "not/a/name"], "a keychain's name is 1 to 64 of A-Z, a-z, 0-9"),
            (["keychain", "create", ".."], "beginning with a letter or digit"),
        ] {
            let screen = try harness.onTerminal(arguments)
            #expect(screen.status == 1 && screen.text.contains(complaint), "\(arguments): \(screen.text)")
            #expect(!screen.text.localizedCaseInsensitiveContains("passcode"), "asked for a secret first: \(screen.text)")
        }
    }

    /// A daemon that cannot start says why in words, and tresor passes that on: a taken web
    /// port, not a bind error.
    @Test func aDaemonThatCannotStartIsExplained() throws {
        let (listener, port) = try listeningOnLoopback()
        defer { close(listener) }
        let harness = try Harness(configuration: #"{"webPort": \#(port)}"#)
        let started = Date()
        let daemon = try harness.tresord([], timeout: 20)
        #expect(daemon.status == 1 && Date().timeIntervalSince(started) < 15, "it stops at once")
        #expect(daemon.stderr.contains("port \(port) is already in use — choose another with --web PORT"), "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("CancellationError") && !daemon.stderr.contains("errno"))

        let result = try harness.tresor(["status"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("tresord did not start: port \(port) is already in use"), "\(result.stderr)")
    }

    /// A TCP socket listening on 127.0.0.1 on a port the kernel picks.
    func listeningOnLoopback() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(ok)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
