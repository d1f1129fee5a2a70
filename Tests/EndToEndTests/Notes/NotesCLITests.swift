import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `tresor note …` against the real daemon: notes and folders, locked notes and their secure
/// sessions, wrong passphrases, passphrase change and reset, attachments, unlock through the
/// keychain. Passphrases and the passcode are declared to the harness, which searches every
/// output, the trace-level daemon log and every home file for them; note content (which the
/// CLI prints on purpose) is searched for in the log and the home files.
@Suite(.blocksItsThread, .serialized) struct NotesCLITests {
    static let passcode = "e2e-notes-passcode"

    func initialized(idle: Int? = nil) throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode, daemonArguments: idle.map { ["--notes-session-idle", "\($0)"] } ?? [])
        return harness
    }

    /// A unique marker for content that must never reach a log or a home file in the clear.
    func marker(_ what: String) -> String { "e2e-\(what)-\(UUID().uuidString.prefix(8))" }

    func create(_ harness: Harness, title: String, body: String, _ extra: [String] = []) throws -> NoteSummary {
        try harness.json(NoteSummary.self, ["note", "new", "--title", title, "--body-stdin"] + extra, input: body)
    }

    func setPassphrase(_ harness: Harness, _ passphrase: String, hint: String? = nil) throws {
        // The hint on standard input, after the passphrase twice: never an argument.
        let result = try harness.tresor(
            ["note", "passphrase", "set", "--passphrase-stdin"] + (hint == nil ? [] : ["--hint"]),
            input: "\(passphrase)\n\(passphrase)\n" + (hint.map { "\($0)\n" } ?? ""))
        #expect(result.succeeded, "\(result.stderr)")
    }

    /// `tresor note show ID --json` with no terminal and no secret: what a session (or the
    /// keychain) gives, or the daemon's error.
    func showWithoutSecret(_ harness: Harness, _ id: String) throws -> (note: OpenedNote?, error: APIError?) {
        let result = try harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"),
            ["--wait", Harness.binaries.appendingPathComponent("tresor").path, "note", "show", id, "--json"], input: "")
        if result.succeeded { return (try CLIJSON.decode(OpenedNote.self, from: Data(result.stdout.utf8)), nil) }
        return (nil, try? CLIJSON.decode(ErrorResponse.self, from: Data(result.stdout.utf8)).error)
    }

    func show(_ harness: Harness, _ id: String, passphrase: String) throws -> Harness.Result {
        try harness.tresor(["note", "show", id, "--passphrase-stdin"], input: passphrase + "\n")
    }

    /// None of `markers` in the daemon's log or in any file of the home.
    func expectNowhereOnDisk(_ harness: Harness, _ markers: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let files = try harness.homeFiles()
        for marker in markers {
            #expect(!harness.daemonLog.contains(marker), "a marker appeared in the daemon log", sourceLocation: sourceLocation)
            for (url, data) in files {
                #expect(data.range(of: Data(marker.utf8)) == nil, "a marker appeared in \(url.lastPathComponent)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func createListShowEditSearchDeleteAndFolders() throws {
        let harness = try initialized()
        let (title, body, folder) = (marker("title"), marker("body") + "\nsecond line", marker("folder"))
        let note = try create(harness, title: title, body: body, ["--folder", folder, "--pin"])
        #expect(!note.id.isEmpty && note.title == title && note.folder == folder && note.isPinned && !note.isLocked)
        let other = try create(harness, title: "", body: "Groceries\nmilk")
        #expect(other.title == "Groceries", "an empty title takes the body's first line")

        let list = try harness.tresor(["note", "list"])
        #expect(list.stdout.contains(note.id) && list.stdout.contains(title) && list.stdout.contains("*"))
        #expect(try harness.json([NoteSummary].self, ["note", "list", "--folder", folder]).map(\.id) == [note.id])
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).first?.id == note.id, "pinned first")

        let shown = try harness.json(OpenedNote.self, ["note", "show", note.id])
        #expect(shown.body == body)
        #expect(try harness.tresor(["note", "show", note.id]).stdout.contains(body))
        // Logged as the daemon's socket route, not the web server's.
        #expect(harness.daemonLog.contains("[TresorDaemon] notes: show succeeded"), "\(harness.daemonLog.suffix(600))")

        #expect(
            try harness.tresor(["note", "edit", note.id, "--title", "Renamed", "--unpin", "--no-folder", "--body-stdin"], input: "new body").succeeded
        )
        let edited = try harness.json(OpenedNote.self, ["note", "show", note.id])
        #expect(edited.summary.title == "Renamed" && !edited.summary.isPinned && edited.summary.folder == nil && edited.body == "new body")

        #expect(try harness.json([NoteSummary].self, ["note", "search", "milk"]).map(\.id) == [other.id])
        #expect(try harness.json([NoteSummary].self, ["note", "search", "renam"]).map(\.id) == [note.id])

        let created = try harness.json(Folder.self, ["note", "folder", "create", "Work"])
        #expect(!created.id.isEmpty && created.name == "Work")
        #expect(try harness.tresor(["note", "folder", "list"]).stdout.contains("Work"))
        #expect(try harness.tresor(["note", "edit", other.id, "--folder", "Work"]).succeeded)
        let busy = try harness.json(ErrorResponse.self, ["note", "folder", "delete", "Work"])
        #expect(busy.error.code == .param && busy.error.message.contains("holds 1 note: move or delete it first"))
        #expect(try harness.tresor(["note", "delete", other.id]).succeeded)
        #expect(try harness.tresor(["note", "folder", "delete", "Work"]).succeeded)
        #expect(try harness.json([Folder].self, ["note", "folder", "list"]).map(\.name).contains("Work") == false)

        // `note delete` moved it to Recently Deleted, where it is shown, restored or deleted for good.
        #expect(try harness.json(OpenedNote.self, ["note", "show", other.id]).summary.deleted != nil)
        #expect(try harness.json([NoteSummary].self, ["note", "trash", "list"]).map(\.id) == [other.id])
        #expect(try harness.json(ErrorResponse.self, ["note", "delete", other.id]).error.code == .param, "deleted already")
        #expect(try harness.json(NoteSummary.self, ["note", "trash", "restore", other.id]).deleted == nil)
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).map(\.id).contains(other.id))
        #expect(try harness.tresor(["note", "delete", other.id]).succeeded)
        #expect(try harness.tresor(["note", "trash", "empty"]).stdout.contains("Deleted 1 note for good"))
        let gone = try harness.json(ErrorResponse.self, ["note", "show", other.id])
        #expect(gone.error.code == .notFound)
        #expect(try harness.tresor(["note", "delete", other.id]).status == 1)
        try expectNowhereOnDisk(harness, [title, body, folder])
        try harness.expectNoSecretLeaked()
    }

    /// A locked note and a backup can be copied and guessed offline: a short passphrase is taken,
    /// with a warning that gives its length only.
    /// A note's text may be someone else's — a shared note, an import, a handed backup: on a
    /// terminal, its title, body and folder are shown with no escape sequence of their own (a
    /// new window title, the clipboard written), each control character a `?`; a pipe gets the
    /// body as it is.
    @Test func aNotesOwnEscapeSequencesNeverReachTheTerminal() throws {
        let harness = try initialized()
        let retitle = "\u{1b}]0;e2e-retitled\u{07}", clipboard = "\u{1b}]52;c;ZTJl\u{07}"
        #expect(try harness.tresor(["note", "folder", "create", "-"], input: "Work\(retitle)\n").succeeded)
        let note = try create(harness, title: "Plans\(retitle)", body: "line one\n\(clipboard)line two\n", ["--folder", "Work\(retitle)"])
        for arguments in [["note", "list"], ["note", "show", note.id], ["note", "show", note.id, "--markdown"], ["note", "folder", "list"]] {
            let screen = try harness.onTerminal(arguments)
            #expect(screen.status == 0, "\(arguments): \(screen.text)")
            #expect(!screen.text.contains("\u{1b}]") && !screen.text.contains("\u{07}"), "\(arguments) printed the note's escapes: \(screen.text)")
        }
        let shown = try harness.onTerminal(["note", "show", note.id, "--markdown"]).text
        #expect(shown.contains("Plans?]0;e2e-retitled?") && shown.contains("?]52;c;ZTJl?line two"), "\(shown)")
        let piped = try harness.tresor(["note", "show", note.id, "--markdown"])
        #expect(piped.stdout.contains("line one\n\(clipboard)line two"), "a pipe gets the body as written")
    }

    @Test func aShortPassphraseIsTakenWithAWarning() throws {
        let harness = try initialized()
        let short = try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "Zq9\nZq9\n")
        #expect(short.succeeded, "\(short.stderr)")
        #expect(short.stderr.contains("warning: a passphrase of 3 characters is guessed quickly"), "\(short.stderr)")
        #expect(!short.stderr.contains("Zq9") && !short.stdout.contains("Zq9"))
        let long = try harness.tresor(
            ["note", "passphrase", "change", "--passphrase-stdin"], input: "Zq9\nlong enough passphrase\nlong enough passphrase\n")
        #expect(long.succeeded && !long.stderr.contains("warning"), "\(long.stderr)")
        let backup = harness.root.appendingPathComponent("short.age").path
        let made = try harness.tresor(
            ["backup", "create", "--out", backup, "--work-factor", "14", "--passcode-stdin"], input: "\(Self.passcode)\nb4ck\nb4ck\n")
        #expect(made.succeeded, "\(made.stderr)")
        #expect(
            made.stderr.contains("warning: a passphrase of 4 characters is guessed quickly by whoever gets a copy of the backup file"),
            "\(made.stderr)")
    }

    @Test func sessionsOpenLockNowAndEndWithTheKeybag() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        harness.secrets.append(passphrase)
        let (firstBody, secondBody) = (marker("first"), marker("second"))
        let first = try create(harness, title: "First", body: firstBody)
        let second = try create(harness, title: "Second", body: secondBody)
        let noPassphrase = try harness.json(ErrorResponse.self, ["note", "lock", first.id])
        #expect(noPassphrase.error.code == .noPassphrase)
        try setPassphrase(harness, passphrase)
        #expect(try harness.json(NoteSummary.self, ["note", "lock", first.id]).isLocked, "the session opened by set")
        #expect(try harness.json(NoteSummary.self, ["note", "lock", second.id]).isLocked)
        #expect(try harness.tresor(["note", "list"]).stdout.contains("[locked]"))
        #expect(try showWithoutSecret(harness, first.id).note?.body == firstBody, "in session: no passphrase")

        #expect(try harness.json([String: Int].self, ["note", "lock-now"])["endedSessions"] == 1)
        let asked = try showWithoutSecret(harness, first.id)
        #expect(asked.error?.code == .passphraseRequired)
        #expect(asked.error?.lock?.isCurrent == true)
        #expect(asked.error?.message.contains("needs the notes passphrase") == true)

        let opened = try show(harness, first.id, passphrase: passphrase)
        #expect(opened.succeeded && opened.stdout.contains(firstBody), "\(opened.stderr)")
        #expect(try showWithoutSecret(harness, second.id).note?.body == secondBody, "a second note of the passphrase opens without asking")

        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try showWithoutSecret(harness, second.id).error?.code == .passphraseRequired, "a keybag lock ends the session")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try showWithoutSecret(harness, second.id).error?.code == .passphraseRequired, "and it stays ended")

        // Removing the lock needs the passphrase too; then no passphrase is ever asked.
        #expect(try harness.tresor(["note", "unlock", first.id, "--passphrase-stdin"], input: passphrase + "\n").succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try showWithoutSecret(harness, first.id).note?.summary.isLocked == false)
        try expectNowhereOnDisk(harness, [firstBody, secondBody])
        try harness.expectNoSecretLeaked()
    }

    /// A script replaces a locked note's body: the body on standard input, the passphrase on
    /// another descriptor (never an argument) — and a wrong one there is refused, changing nothing.
    @Test func aScriptReplacesALockedBodyWithThePassphraseOnAnotherDescriptor() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        let (oldBody, newBody) = (marker("old-body"), marker("new-body"))
        harness.secrets += [passphrase]
        let note = try create(harness, title: "Scripted", body: oldBody)
        try setPassphrase(harness, passphrase)
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let bodyFile = harness.root.appendingPathComponent("body")
        try Data(newBody.utf8).write(to: bodyFile)
        func edit(passphrase given: String, lineEnd: String = "\n") throws -> Harness.Result {
            let file = harness.root.appendingPathComponent("passphrase")
            try Data((given + lineEnd).utf8).write(to: file)
            chmod(file.path, 0o600)
            return try harness.run(
                URL(fileURLWithPath: "/bin/sh"),
                [
                    "-c", "exec \"$0\" \"$@\" < \(bodyFile.path) 3< \(file.path)", Harness.binaries.appendingPathComponent("tresor").path,
                    "note", "edit", note.id, "--body-stdin", "--passphrase-fd", "3",
                ])
        }
        let wrong = try edit(passphrase: marker("wrong"))
        #expect(!wrong.succeeded && wrong.stderr.contains("wrong"), "\(wrong.stderr)")
        #expect(try show(harness, note.id, passphrase: passphrase).stdout.contains(oldBody))
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        // A descriptor nobody opened is named as such.
        let closed = try harness.run(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "exec \"$0\" \"$@\" < \(bodyFile.path)", Harness.binaries.appendingPathComponent("tresor").path,
                "note", "edit", note.id, "--body-stdin", "--passphrase-fd", "7",
            ])
        #expect(!closed.succeeded && closed.stderr.contains("file descriptor 7 is not open"), "\(closed.stderr)")

        // A file written on Windows ends its line with CR LF: the passphrase is the line without it.
        let edited = try edit(passphrase: passphrase, lineEnd: "\r\n")
        #expect(edited.succeeded, "\(edited.stderr)")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let shown = try show(harness, note.id, passphrase: passphrase)
        #expect(shown.stdout.contains(newBody) && !shown.stdout.contains(oldBody), "\(shown.stdout)")
        #expect(try showWithoutSecret(harness, note.id).note?.summary.isLocked == true, "still locked")
        try harness.expectNoSecretLeaked()
    }

    @Test func anIdleSessionEnds() throws {
        let harness = try initialized(idle: 2)
        let passphrase = marker("passphrase")
        harness.secrets.append(passphrase)
        let note = try create(harness, title: "Idle", body: "idle body")
        try setPassphrase(harness, passphrase)
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.sessionOpen)
        sleep(3)
        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.sessionOpen == false)
        #expect(try showWithoutSecret(harness, note.id).error?.code == .passphraseRequired)
        #expect(harness.daemonLog.contains("notes sessions ended after idle period"))
        try harness.expectNoSecretLeaked()
    }

    @Test func wrongPassphrasesShowTheHintThenWait() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        let hint = "e2e-hint-the-usual"
        let wrong = (1...5).map { marker("wrong\($0)") }
        harness.secrets += [passphrase] + wrong
        let note = try create(harness, title: "Guarded", body: "guarded body")
        try setPassphrase(harness, passphrase, hint: hint)
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        for (index, attempt) in wrong.enumerated() {
            let result = try harness.json(ErrorResponse.self, ["note", "show", note.id, "--passphrase-stdin"], input: attempt + "\n")
            #expect(result.error.code == .wrongPassphrase)
            #expect(result.error.failedAttempts == index + 1)
            #expect(result.error.message.contains(hint) == (index >= 2), "the hint from the third wrong entry: \(result.error.message)")
            #expect(result.error.message.contains("try again in") == (index == 4))
        }
        let refused = try harness.tresor(["note", "show", note.id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("too many wrong passphrases; try again in"))
        #expect(refused.stderr.contains(hint))
        #expect(!refused.stdout.contains("guarded body"))
        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"]).status.failedAttempts == 5)
        #expect(!harness.daemonLog.contains(hint))
        try harness.expectNoSecretLeaked()
    }

    @Test func passphraseChangeRewrapsEveryNote() throws {
        let harness = try initialized()
        let (old, new) = (marker("old"), marker("new"))
        harness.secrets += [old, new]
        try setPassphrase(harness, old)
        var ids: [String] = []
        for index in 0..<30 {
            let note = try create(harness, title: "Note \(index)", body: "body \(index)")
            #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
            ids.append(note.id)
        }
        let mismatch = try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(old)\n\(new)\nsomething else\n")
        #expect(!mismatch.succeeded && mismatch.stderr.contains("differ"))
        let changed = try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(old)\n\(new)\n\(new)\n")
        #expect(changed.succeeded, "\(changed.stderr)")
        #expect(!changed.stderr.contains("Re-wrapping"), "no progress bar without a terminal")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        let withOld = try harness.json(ErrorResponse.self, ["note", "show", ids[0], "--passphrase-stdin"], input: old + "\n")
        #expect(withOld.error.code == .wrongPassphrase)
        #expect(try show(harness, ids[0], passphrase: new).stdout.contains("body 0"))
        for (index, id) in ids.enumerated() {
            #expect(try showWithoutSecret(harness, id).note?.body == "body \(index)", "every note opens with the new passphrase")
        }
        try harness.expectNoSecretLeaked()
    }

    @Test func resetKeepsOldNotesUnderTheirPassphrase() throws {
        let harness = try initialized()
        let (first, second) = (marker("first"), marker("second"))
        harness.secrets += [first, second]
        let oldHint = "e2e-old-hint"
        try setPassphrase(harness, first, hint: oldHint)
        let old = try create(harness, title: "Old", body: "old body")
        #expect(try harness.tresor(["note", "lock", old.id]).succeeded)

        let wrongPasscode = try harness.json(
            ErrorResponse.self, ["note", "passphrase", "reset", "--passcode-stdin"], input: "not-the-passcode\n\(second)\n\(second)\n")
        #expect(wrongPasscode.error.code == .authFailed)
        #expect(try harness.status().failedAttempts == 1, "a wrong passcode counts on the keybag")
        let reset = try harness.tresor(
            ["note", "passphrase", "reset", "--passcode-stdin", "--hint"], input: "\(Self.passcode)\n\(second)\n\(second)\ne2e-new-hint\n")
        #expect(reset.succeeded, "\(reset.stderr)")
        let fresh = try create(harness, title: "New", body: "new body")
        #expect(try harness.tresor(["note", "lock", fresh.id]).succeeded, "the reset opened the new passphrase's session")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        let asked = try showWithoutSecret(harness, old.id)
        #expect(asked.error?.code == .passphraseRequired)
        #expect(
            asked.error?.message.contains("locked with an earlier passphrase (hint: \(oldHint), set on ") == true, "\(asked.error?.message ?? "")")
        #expect(asked.error?.lock?.isCurrent == false)
        #expect(try show(harness, fresh.id, passphrase: second).stdout.contains("new body"))
        #expect(try show(harness, old.id, passphrase: first).stdout.contains("old body"))

        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let rewrapped = try harness.tresor(["note", "rewrap", old.id, "--passphrase-stdin", "--json"], input: "\(first)\n\(second)\n")
        #expect(rewrapped.succeeded, "\(rewrapped.stderr)")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let now = try harness.json(OpenedNote.self, ["note", "show", old.id, "--passphrase-stdin"], input: second + "\n")
        #expect(now.body == "old body" && now.summary.lock?.isCurrent == true)
        try harness.expectNoSecretLeaked()
    }

    /// A large attachment goes through the CLI and the daemon a piece at a time: attaching 64 MiB
    /// raises tresord's peak resident memory by less than half the file (it used to hold the
    /// whole upload, and a copy), and the `tresor` process never holds the file either; and every
    /// byte comes back. The export's memory is ``AttachmentStreamingTests``' to hold: it measures
    /// from a peak reset after the upload, where this test's peak still carries the upload's.
    @Test func aLargeAttachmentIsNotHeldWholeByTheDaemon() throws {
        let harness = try initialized()
        let size = 64 << 20
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in block.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            block[index] = UInt8(truncatingIfNeeded: state >> 33)
        }
        var bytes = Data(capacity: size)
        for index in 0..<(size >> 20) {
            block[0] = UInt8(index)  // no two megabytes alike: a chunk out of place would show
            bytes.append(contentsOf: block)
        }
        let file = harness.root.appendingPathComponent("video.bin")
        try bytes.write(to: file)
        let note = try create(harness, title: "Holiday", body: "film")
        let pid = try harness.status().pid
        let before = try peakResidentKB(of: pid)
        // The CLI measured too: its peak resident memory, from the rusage of a wrapper's one child.
        let measured = try harness.run(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                "-c",
                """
                import resource, subprocess, sys
                done = subprocess.run(sys.argv[1:], capture_output=True)
                print(done.stdout.decode().strip()); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
                sys.exit(done.returncode)
                """, Harness.binaries.appendingPathComponent("tresor").path, "note", "attach", note.id, "--kind", "file", "--file", file.path,
                "--json",
            ])
        #expect(measured.succeeded, "\(measured.stderr)")
        let lines = measured.stdout.split(separator: "\n")
        let attached = try CLIJSON.decode(AttachmentInfo.self, from: Data(lines.dropLast().joined(separator: "\n").utf8))
        let cliPeakKB = Int(lines.last ?? "") ?? .max
        let growth = try peakResidentKB(of: pid) - before
        #expect(attached.byteCount == size)
        #expect(cliPeakKB < 48 << 10, "tresor note attach peaked at \(cliPeakKB) kB for a 64 MiB file: it read the file whole")
        // Holding the file would add at least its 64 MiB; pieces in flight and the allocator's
        // arenas on a loaded machine add up to about 25 MiB.
        #expect(growth < (size >> 10) / 2, "tresord's peak grew by \(growth) kB for a 64 MiB upload")
        let out = harness.root.appendingPathComponent("back.bin")
        #expect(try harness.tresor(["note", "export-attachment", note.id, attached.id, "--out", out.path]).succeeded)
        #expect(try Data(contentsOf: out) == bytes)
    }

    /// `VmHWM` of a process: its peak resident memory so far.
    func peakResidentKB(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
    }

    @Test func attachmentsRoundTripAndOnlyLockableKindsLock() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        harness.secrets.append(passphrase)
        let imageBytes = Data((marker("image") + "\u{0}\u{1}\u{2}binary").utf8) + Data((0..<4096).map { UInt8($0 % 251) })
        let image = harness.root.appendingPathComponent("photo.png"), pdf = harness.root.appendingPathComponent("report.pdf")
        try imageBytes.write(to: image)
        try Data("%PDF-1.4 e2e".utf8).write(to: pdf)
        try setPassphrase(harness, passphrase)

        let mixed = try create(harness, title: "Mixed", body: "with a pdf")
        let attached = try harness.json(AttachmentInfo.self, ["note", "attach", mixed.id, "--kind", "image", "--file", image.path])
        #expect(!attached.id.isEmpty && attached.name == "photo.png" && attached.byteCount == imageBytes.count)
        #expect(try harness.tresor(["note", "attach", mixed.id, "--kind", "pdf", "--file", pdf.path]).succeeded)
        let refused = try harness.json(ErrorResponse.self, ["note", "lock", mixed.id])
        #expect(refused.error.code == .attachmentNotLockable)
        #expect(refused.error.message.contains("report.pdf"))

        let photos = try create(harness, title: "Photos", body: "one image")
        let photo = try harness.json(
            AttachmentInfo.self, ["note", "attach", photos.id, "--kind", "image", "--file", image.path, "--name", "Holiday.png"])
        #expect(try harness.tresor(["note", "lock", photos.id]).succeeded)
        let pdfRefused = try harness.json(ErrorResponse.self, ["note", "attach", photos.id, "--kind", "pdf", "--file", pdf.path])
        #expect(pdfRefused.error.code == .attachmentNotLockable)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        let out = harness.root.appendingPathComponent("exported.png")
        let exported = try harness.tresor(
            ["note", "export-attachment", photos.id, photo.id, "--out", out.path, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(exported.succeeded, "\(exported.stderr)")
        #expect(try Data(contentsOf: out) == imageBytes)
        #expect(try mode(of: out.path) == 0o600)
        let again = try harness.tresor(["note", "export-attachment", photos.id, photo.id, "--out", out.path])
        #expect(!again.succeeded && again.stderr.contains("--force"))
        #expect(try harness.tresor(["note", "export-attachment", photos.id, photo.id, "--out", out.path, "--force"]).succeeded)
        let piped = try harness.tresor(["note", "export-attachment", mixed.id, attached.id, "--out", "-"])
        #expect(Data(piped.stdout.utf8) == Data(String(decoding: imageBytes, as: UTF8.self).utf8))

        let shown = try harness.json(OpenedNote.self, ["note", "show", photos.id])
        #expect(shown.attachments.map(\.name) == ["Holiday.png"])
        try expectNowhereOnDisk(harness, [String(decoding: imageBytes.prefix(20), as: UTF8.self)])
        try harness.expectNoSecretLeaked()
    }

    /// An attachment is named as a note is: by its id or a start of it no other attachment of the
    /// note shares; one start shared by several lists them, and a locked note's listing is read
    /// with its passphrase.
    @Test func anAttachmentIsNamedByAUniqueStartOfItsID() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        harness.secrets.append(passphrase)
        try setPassphrase(harness, passphrase)
        let file = harness.root.appendingPathComponent("scan.png")
        try Data("e2e prefix".utf8).write(to: file)
        let note = try create(harness, title: "Scans", body: "many")
        // Seventeen ids of sixteen first digits: two start alike.
        let ids = try (0..<17).map { _ in
            try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", file.path]).id
        }
        let shared = try #require(Dictionary(grouping: ids, by: { $0.prefix(1) }).first { $0.value.count > 1 })
        let ambiguous = try harness.tresor(["note", "export-attachment", note.id, String(shared.key), "--out", "-"])
        #expect(!ambiguous.succeeded && ambiguous.stderr.contains("give more of the id"), "\(ambiguous.stderr)")
        #expect(shared.value.allSatisfy(ambiguous.stderr.contains), "the candidates are listed: \(ambiguous.stderr)")
        let unknown = try harness.json(ErrorResponse.self, ["note", "export-attachment", note.id, "zz", "--out", "-"])
        #expect(unknown.error.code == .notFound && unknown.error.message.contains("tresor note show"), "\(unknown.error)")

        let one = ids[0], start = String(ids[0].prefix(13))
        let exported = try harness.tresor(["note", "export-attachment", note.id, start, "--out", "-"])
        #expect(exported.succeeded && exported.stdout == "e2e prefix", "\(exported.stderr)")
        let excluded = try harness.json(AttachmentInfo.self, ["note", "attachment-backup", note.id, start, "--exclude"])
        #expect(excluded.id == one && excluded.excludedFromBackup == true)

        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let detached = try harness.tresor(["note", "detach", note.id, start, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(detached.succeeded && detached.stdout.contains("Removed attachment \(one)"), "\(detached.stderr)")
        #expect(try !harness.json(OpenedNote.self, ["note", "show", note.id]).attachments.map(\.id).contains(one))
        try harness.expectNoSecretLeaked()
    }

    /// A body at the limit (1 MiB) is taken whatever its characters — quotes and control
    /// characters grow in JSON — and one past it is refused for its own size, not the request's.
    @Test func aBodyAtTheLimitIsTakenWhateverItsCharacters() throws {
        let harness = try initialized()
        let limit = 1024 * 1024  // NoteLimits.bodyBytes, docs/API.md
        let quotes = String(repeating: "\"", count: limit)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Quotes", "--body-stdin"], input: quotes)
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body == quotes)
        let controls = String(repeating: "\u{1}", count: limit / 2) + String(repeating: "\\", count: limit / 2)
        let edited = try harness.tresor(["note", "edit", note.id, "--body-stdin"], input: controls)
        #expect(edited.succeeded, "\(edited.stderr)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body == controls)
        let over = try harness.json(ErrorResponse.self, ["note", "new", "--title", "Over", "--body-stdin"], input: quotes + "\"")
        #expect(over.error.code == .param && over.error.message.contains("body"), "\(over.error)")
    }

    /// Removing an attachment destroys it for good: one of a locked note needs the note's key
    /// (its passphrase, or its open session), as opening it does; an unlocked note's needs none.
    @Test func detachingALockedNotesAttachmentNeedsItsPassphrase() throws {
        let harness = try initialized()
        let passphrase = marker("passphrase")
        harness.secrets.append(passphrase)
        let image = harness.root.appendingPathComponent("photo.png")
        try Data("e2e detach".utf8).write(to: image)
        try setPassphrase(harness, passphrase)
        let note = try create(harness, title: "Deeds", body: "kept")
        let photo = try harness.json(AttachmentInfo.self, ["note", "attach", note.id, "--kind", "image", "--file", image.path])
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)

        let refused = try harness.json(ErrorResponse.self, ["note", "detach", note.id, photo.id], input: "")
        #expect(refused.error.code == .passphraseRequired, "\(refused.error)")
        let wrong = try harness.json(ErrorResponse.self, ["note", "detach", note.id, photo.id, "--passphrase-stdin"], input: "not-it\n")
        #expect(wrong.error.code == .wrongPassphrase)
        let kept = try harness.tresor(["note", "export-attachment", note.id, photo.id, "--out", "-", "--passphrase-stdin"], input: passphrase + "\n")
        #expect(kept.succeeded && kept.stdout == "e2e detach", "still there: \(kept.stderr)")

        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let removed = try harness.tresor(["note", "detach", note.id, photo.id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(removed.succeeded, "\(removed.stderr)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).attachments.isEmpty, "the session the passphrase opened shows it")

        let plain = try create(harness, title: "Plain", body: "open")
        let file = try harness.json(AttachmentInfo.self, ["note", "attach", plain.id, "--kind", "image", "--file", image.path])
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try harness.tresor(["note", "detach", plain.id, file.id]).succeeded, "an unlocked note's attachment needs no key")
        try harness.expectNoSecretLeaked()
    }

    @Test func unlockThroughTheKeychain() throws {
        let harness = try initialized()
        let (passphrase, next) = (marker("passphrase"), marker("next"))
        harness.secrets += [passphrase, next]
        let note = try create(harness, title: "Keychain", body: "kept body")
        try setPassphrase(harness, passphrase)
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        let wrong = try harness.json(ErrorResponse.self, ["note", "passphrase", "keychain", "on", "--passphrase-stdin"], input: "wrong-one\n")
        #expect(wrong.error.code == .wrongPassphrase)
        let on = try harness.json(
            NotesPassphraseStatus.self, ["note", "passphrase", "keychain", "on", "--passphrase-stdin"], input: passphrase + "\n")
        #expect(on.status.keychainUnlock && on.keychainUserPresence == false)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try showWithoutSecret(harness, note.id).note?.body == "kept body", "the keychain opens it while the keybag is unlocked")

        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try showWithoutSecret(harness, note.id).error?.code == .passphraseRequired, "not once the keybag is locked")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try showWithoutSecret(harness, note.id).note != nil)

        // Changing the passphrase needs the typed current one; the keychain's key is no substitute.
        #expect(try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "").status == 1)
        let guessed = try harness.json(
            ErrorResponse.self, ["note", "passphrase", "change", "--passphrase-stdin"], input: "guess\n\(next)\n\(next)\n")
        #expect(guessed.error.code == .wrongPassphrase)
        #expect(try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(passphrase)\n\(next)\n\(next)\n").succeeded)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try showWithoutSecret(harness, note.id).note != nil, "the keychain keeps the new key after a change")

        // Its item deleted as any item is: the status says the key is gone, not just "on".
        let kept = try #require(try harness.json([KeychainItem].self, ["item", "find", "--service", "tresor.notes.passphrase-key"]).first)
        #expect(try harness.tresor(["item", "delete", "--id", kept.id]).succeeded)
        let gone = try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "status"])
        #expect(gone.status.keychainUnlock && gone.keychainKeyMissing == true)
        #expect(try harness.tresor(["note", "passphrase", "status"]).stdout.contains("but its key is gone from the keychain"))
        let again = try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "keychain", "on", "--passphrase-stdin"], input: next + "\n")
        #expect(again.keychainKeyMissing == nil)

        #expect(try harness.json(NotesPassphraseStatus.self, ["note", "passphrase", "keychain", "off"]).status.keychainUnlock == false)
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try showWithoutSecret(harness, note.id).error?.code == .passphraseRequired)
        try harness.expectNoSecretLeaked()
    }

    @Test func aClientWithoutTheNotesEntitlementReachesNoNotes() throws {
        let harness = try initialized()
        let client = try TresorKitClient.connect(harness)
        #expect {
            try client.notesList()
        } throws: { error in
            (error as? APIError)?.code == .missingEntitlement
        }
    }
}
