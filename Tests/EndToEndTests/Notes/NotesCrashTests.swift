import Foundation
import NoteStoreFixture
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The daemon SIGKILLed while the notes passphrase changes, is reset or re-wraps a note, while
/// notes are imported and while folders change, then restarted: no note is left under no
/// passphrase or under two, none is imported twice, and none is left between two folders.
@Suite(.blocksItsThread, .serialized) struct NotesCrashTests {
    static let passcode = "e2e-notes-crash-passcode"
    static let noteCount = 24
    static let kills = Int(ProcessInfo.processInfo.environment["TRESOR_NOTES_CRASH_KILLS"] ?? "") ?? 4

    /// docs/API.md, "The passphrase": a change is one transaction, so "a crash leaves every note
    /// opening with the old or the new passphrase". Killed at random moments across `tresor note
    /// passphrase change` over many locked notes (its two PBKDF2 runs and the re-wrapping
    /// transaction): every note must open, all with one passphrase — the new one whenever the
    /// CLI had reported success.
    @Test func aDaemonKilledDuringAPassphraseChangeLeavesEveryNoteOpeningWithOneOfThem() throws {
        let (harness, passphrases) = try homeWithPassphrases("e2e-crash-passphrase")
        var ids: [String] = []
        for index in 0..<Self.noteCount {
            let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "crash \(index)", "--body-stdin"], input: "body \(index)")
            #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
            ids.append(note.id)
        }

        // One change without a kill, to learn how long a change takes here.
        let started = Date()
        #expect(try change(harness, from: passphrases[0], to: passphrases[1]).succeeded)
        let duration = Date().timeIntervalSince(started)
        var current = 1
        try expectAllOpen(harness, ids, with: passphrases[current], notWith: passphrases[0])

        var survived = 0
        for round in 0..<Self.kills {
            let (old, new) = (passphrases[current], passphrases[current + 1])
            let delay = Double.random(in: 0...(duration * 1.2)) * (round == 0 ? 0.5 : 1)
            let result = try changeKillingTheDaemon(harness, from: old, to: new, after: delay)
            try harness.startDaemon()
            #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)

            let opensWithNew = try harness.tresor(["note", "show", ids[0], "--passphrase-stdin", "--json"], input: new + "\n").succeeded
            if result.succeeded { #expect(opensWithNew, "the CLI reported the change, so the new passphrase must open the notes") }
            if opensWithNew { current += 1 }
            // A session for the passphrase that opened the first note must open all of them —
            // none may be left under the other one (or neither).
            try expectAllOpen(harness, ids, with: passphrases[current], notWith: opensWithNew ? old : new)
            survived += 1
        }
        #expect(survived == Self.kills)
    }

    func change(_ harness: Harness, from old: String, to new: String) throws -> Harness.Result {
        try harness.tresor(["note", "passphrase", "change", "--passphrase-stdin"], input: "\(old)\n\(new)\n\(new)\n")
    }

    /// Every note opens in the session of `passphrase`, and `other` opens none (checked on one).
    func expectAllOpen(
        _ harness: Harness, _ ids: [String], with passphrase: String, notWith other: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let first = try harness.tresor(["note", "show", ids[0], "--passphrase-stdin", "--json"], input: passphrase + "\n")
        #expect(first.succeeded, "\(first.stderr)", sourceLocation: sourceLocation)
        for (index, id) in ids.enumerated() {
            let shown = try harness.tresor(["note", "show", id, "--json"], input: "")
            #expect(shown.succeeded, "note \(index) did not open in the session: \(shown.stdout)\(shown.stderr)", sourceLocation: sourceLocation)
            if shown.succeeded {
                #expect(try CLIJSON.decode(OpenedNote.self, from: Data(shown.stdout.utf8)).body == "body \(index)", sourceLocation: sourceLocation)
            }
        }
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(
            !(try harness.tresor(["note", "show", ids[ids.count / 2], "--passphrase-stdin", "--json"], input: other + "\n").succeeded),
            "the other passphrase still opens a note", sourceLocation: sourceLocation)
    }

    /// A reset starts a new passphrase and leaves the notes locked before it under the old one;
    /// a re-wrap moves one note to the current passphrase. Each is one transaction (docs/API.md,
    /// "The passphrase"). The daemon is SIGKILLed at random moments across each: after a
    /// restart the reset happened or not — it did whenever the CLI reported success — a note
    /// locked now opens with the passphrase that is current, the notes before the resets still
    /// open with theirs, and the re-wrapped note opens with exactly one of the two passphrases,
    /// the current one whenever the CLI reported success.
    @Test func aDaemonKilledDuringAResetOrARewrapLeavesEachNoteUnderOnePassphrase() throws {
        let (harness, passphrases) = try homeWithPassphrases("e2e-reset-passphrase")
        let before = try (0..<2).map { index in
            let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "before \(index)", "--body-stdin"], input: "body \(index)")
            #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
            return note.id
        }

        // One reset without a kill, to learn how long a reset takes here.
        let started = Date()
        #expect(try harness.tresor(["note", "passphrase", "reset", "--passcode-stdin"], input: reset(to: passphrases[1])).succeeded)
        let duration = Date().timeIntervalSince(started)
        var current = 1
        for round in 0..<Self.kills {
            let delay = Double.random(in: 0...(duration * 1.2)) * (round == 0 ? 0.5 : 1)
            let arguments = ["note", "passphrase", "reset", "--passcode-stdin"]
            let result = try runKillingTheDaemon(harness, arguments, input: reset(to: passphrases[current + 1]), after: delay)
            try harness.startDaemon()
            #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
            let generation = try #require(try harness.json(PassphraseStatus.self, ["note", "passphrase", "status"]).generation)
            #expect((current + 1...current + 2).contains(generation), "generation \(generation) after reset to passphrase \(current + 1)")
            if result.succeeded { #expect(generation == current + 2, "the CLI reported the reset, so it must have happened") }
            current = generation - 1
            // A note locked now is locked with the current passphrase and opens with it.
            let probe = try harness.json(NoteSummary.self, ["note", "new", "--title", "probe \(round)", "--body-stdin"], input: "probe")
            #expect(try harness.tresor(["note", "lock", probe.id, "--passphrase-stdin"], input: passphrases[current] + "\n").succeeded)
            #expect(try opens(harness, probe.id, with: passphrases[current]))
            #expect(try opens(harness, before[0], with: passphrases[0]), "a note locked before every reset no longer opens with its passphrase")
        }

        // Re-wraps of a note from the first passphrase to the current one: one without a kill,
        // to learn how long one takes, then the other one's, killed.
        let rewrapInput = "\(passphrases[0])\n\(passphrases[current])\n"
        let rewrapStarted = Date()
        #expect(try harness.tresor(["note", "rewrap", before[1], "--passphrase-stdin", "--json"], input: rewrapInput).succeeded)
        let rewrapDuration = Date().timeIntervalSince(rewrapStarted)
        var moved = false
        for _ in 0..<Self.kills where !moved {
            #expect(try harness.tresor(["note", "lock-now"]).succeeded)
            let result = try runKillingTheDaemon(
                harness, ["note", "rewrap", before[0], "--passphrase-stdin", "--json"], input: rewrapInput,
                after: Double.random(in: 0...(rewrapDuration * 1.2)))
            try harness.startDaemon()
            #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
            moved = try opens(harness, before[0], with: passphrases[current])
            if result.succeeded { #expect(moved, "the CLI reported the re-wrap, so the current passphrase must open the note") }
            let stayed = try opens(harness, before[0], with: passphrases[0])
            #expect(moved != stayed, "the note opens with \(moved ? "both passphrases" : "neither passphrase")")
        }
        let opened = try harness.json(
            OpenedNote.self, ["note", "show", before[0], "--passphrase-stdin"], input: passphrases[moved ? current : 0] + "\n")
        #expect(opened.body == "body 0")
    }

    /// An import is one transaction per batch, and recognises what an earlier import brought in.
    /// The daemon is SIGKILLed at random moments across `tresor import apple-notes` of 60 notes
    /// (the reader, the request, the transaction); run again after the restart, the import
    /// completes and every note of the file is there exactly once, whole.
    @Test func anImportKilledMidwayAndRunAgainBringsEachNoteOnce() throws {
        let harness = try Harness.initialized(passcode: Self.passcode)
        let folder = try TemporaryFolder()
        var importSeconds: TimeInterval?
        var imported = 0
        for round in 0...Self.kills {
            var fixture = NoteStoreFixture(schema: .newer)
            let account = fixture.addAccount(name: "iCloud")
            let notes = fixture.addFolder(title: "Round \(round)", account: account)
            var bodies: [String: String] = [:]
            for index in 0..<60 {
                let title = "round \(round) note \(index)"
                bodies[title] = "\(title)\nwith a body of its own, \(index * 7919 % 1000)"
                _ = try fixture.addNote(.init(title: title, text: bodies[title]!, folder: notes, account: account))
            }
            let store = try fixture.write(into: folder, name: "NoteStore-\(round).sqlite")
            let arguments = ["import", "apple-notes", store.path, "--json"]

            // The first round is not killed: it learns how long an import takes here.
            let first: Harness.Result
            if let seconds = importSeconds {
                first = try runKillingTheDaemon(harness, arguments, input: "", after: Double.random(in: 0...(seconds * 1.2)))
                try harness.startDaemon()
                #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
            } else {
                let started = Date()
                first = try harness.tresor(arguments)
                importSeconds = Date().timeIntervalSince(started)
            }
            let again = try harness.tresor(arguments)
            #expect(again.succeeded, "\(again.stderr)")
            if first.succeeded { #expect(try CLIJSON.decode(Imported.self, from: Data(again.stdout.utf8)).report.alreadyImported == bodies.count) }
            let listed = try harness.json([NoteSummary].self, ["note", "list", "--folder", "Round \(round)"])
            #expect(listed.count == bodies.count, "\(listed.count) notes after round \(round)'s imports, not \(bodies.count)")
            #expect(Set(listed.map(\.title)) == Set(bodies.keys))
            for note in [listed.first, listed.last].compactMap({ $0 }) {
                #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body == bodies[note.title])
            }
            imported += listed.count
        }
        #expect(try harness.json([NoteSummary].self, ["note", "list"]).count == imported)
    }

    struct Imported: Decodable { var report: ImportReport }

    /// Each folder change is one transaction: a move that names a missing folder creates it in
    /// the same one (docs/API.md, "Notes"). The daemon is SIGKILLed at a random moment inside a
    /// run of moves into folders and out of them, folder creations and deletions of empty
    /// folders. After the restart the notes and folders are exactly as every acknowledged change
    /// left them, with the change that was running either done whole or not at all: each note
    /// there once, in one folder, and each folder listed once with the count of its notes.
    @Test func aDaemonKilledDuringFolderChangesLeavesEachNoteInOneFolder() throws {
        let harness = try Harness.initialized(passcode: Self.passcode)
        var state = FolderState(notes: [:], folders: [])
        for index in 0..<8 {
            let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "filed \(index)", "--body-stdin"], input: "body \(index)")
            state.notes[note.id] = nil as String?
        }
        let cli = try CrashDriver.cliThatStartsNoDaemon(harness)
        var random = SystemRandomNumberGenerator()

        // The first run is not killed: it learns how long a run of changes takes here.
        var runSeconds: TimeInterval?
        var killedWhileRunning = 0
        for round in 0...Self.kills {
            // Planned on a copy, so that each change can be made after the ones before it.
            var planned = state
            let changes = (0..<24).map { _ in FolderChange.random(in: &planned, using: &random) }
            let started = Date()
            let (acknowledged, pending) = try runChanges(
                changes, harness: harness, cli: cli, from: state, killAfter: runSeconds.map { Double.random(in: 0...($0 * 0.9)) })
            if runSeconds == nil {
                runSeconds = Date().timeIntervalSince(started)
                #expect(pending == nil, "a change failed with the daemon running")
            } else {
                try harness.startDaemon()
                #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
            }
            let observed = try FolderState.observed(harness)
            if let pending {
                killedWhileRunning += 1
                let done = pending.applied(to: acknowledged)
                #expect(observed == acknowledged || observed == done, "round \(round): \(observed) is neither before nor after \(pending)")
            } else {
                #expect(observed == acknowledged, "round \(round)")
            }
            state = observed
        }
        #expect(killedWhileRunning > 0, "no kill landed inside a run of changes")
    }

    /// The notes' folders (nil: none) and the names of the folders there are.
    struct FolderState: Equatable, CustomStringConvertible {
        var notes: [String: String?]
        var folders: Set<String>
        var description: String {
            "notes \(notes.values.map { $0 ?? "-" }.sorted()), folders \(folders.sorted())"
        }

        /// What the CLI lists: every note once, and each folder once with the count of its notes.
        static func observed(_ harness: Harness) throws -> FolderState {
            let notes = try harness.json([NoteSummary].self, ["note", "list"])
            #expect(Set(notes.map(\.id)).count == notes.count, "a note listed twice")
            let folders = try harness.json([Folder].self, ["note", "folder", "list"])
            #expect(Set(folders.map(\.name)).count == folders.count, "two folders of one name: \(folders.map(\.name))")
            for folder in folders {
                #expect(folder.noteCount == notes.filter { $0.folder == folder.name }.count, "folder \(folder.name)'s count")
            }
            return FolderState(
                notes: Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0.folder) }), folders: Set(folders.map(\.name)))
        }
    }

    /// One change of folders through the CLI.
    enum FolderChange: CustomStringConvertible {
        case move(note: String, to: String?)
        case create(String)
        case delete(String)

        var arguments: [String] {
            switch self {
            case .move(let note, let folder?): ["note", "edit", note, "--folder", folder]
            case .move(let note, nil): ["note", "edit", note, "--no-folder"]
            case .create(let name): ["note", "folder", "create", name]
            case .delete(let name): ["note", "folder", "delete", name]
            }
        }

        var description: String { arguments.joined(separator: " ") }

        func applied(to state: FolderState) -> FolderState {
            var state = state
            switch self {
            case .move(let note, let folder):
                state.notes[note] = folder
                if let folder { state.folders.insert(folder) }
            case .create(let name): state.folders.insert(name)
            case .delete(let name): state.folders.remove(name)
            }
            return state
        }

        /// A change that can be made in `state`, which it is applied to: moves into a new folder
        /// (created by the move), into one there is or out of any, creations, and deletions of
        /// empty folders.
        static func random(in state: inout FolderState, using random: inout some RandomNumberGenerator) -> FolderChange {
            let note = state.notes.keys.randomElement(using: &random)!
            let empty = state.folders.filter { name in !state.notes.values.contains(name) }
            let change: FolderChange =
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4: .move(note: note, to: newName(using: &random))
                case 4..<6: .move(note: note, to: state.folders.randomElement(using: &random))
                case 6..<7: .move(note: note, to: nil)
                case 7..<8: .create(newName(using: &random))
                default: empty.randomElement(using: &random).map { .delete($0) } ?? .create(newName(using: &random))
                }
            state = change.applied(to: state)
            return change
        }

        /// A folder name no change has used yet (most likely).
        static func newName(using random: inout some RandomNumberGenerator) -> String {
            "Folder \(UInt32.random(in: 0...UInt32.max, using: &random))"
        }
    }

    /// Runs `changes` one after another, in one shell script, with a CLI that starts no daemon,
    /// until one fails; with `killAfter`, SIGKILLs the daemon that many seconds after the start.
    /// Returns the state after the acknowledged changes and the one that failed, if any — after
    /// a kill it may or may not have been made.
    func runChanges(
        _ changes: [FolderChange], harness: Harness, cli: (URL, [String: String]), from state: FolderState, killAfter delay: TimeInterval?
    ) throws -> (acknowledged: FolderState, pending: FolderChange?) {
        let (cli, environment) = cli
        // Each argument is quoted whole; none of them holds a quote.
        let lines = changes.enumerated().map { index, change in
            let quoted = ([cli.path] + change.arguments).map { "'\($0)'" }.joined(separator: " ")
            return "\(quoted) > /dev/null 2>&1 || exit 0\necho \(index)"
        }
        let script = harness.root.appendingPathComponent("folder-changes.sh")
        try Data(lines.joined(separator: "\n").utf8).write(to: script)
        let run = try runKillingTheDaemon(
            harness, [script.path], input: "", after: delay, executable: URL(fileURLWithPath: "/bin/sh"), environment: environment)
        let done = run.stdout.split(separator: "\n").count
        let acknowledged = changes.prefix(done).reduce(state) { $1.applied(to: $0) }
        return (acknowledged, done < changes.count ? changes[done] : nil)
    }

    /// A home with the passcode, and a notes passphrase set to the first of `kills + 2`
    /// passphrases named after `prefix` (each a secret of the harness).
    func homeWithPassphrases(_ prefix: String) throws -> (Harness, [String]) {
        let passphrases = (0...(Self.kills + 1)).map { "\(prefix)-\($0)-\(UUID().uuidString.prefix(6))" }
        let harness = try Harness()
        harness.secrets = [Self.passcode] + passphrases
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrases[0])\n\(passphrases[0])\n").succeeded)
        return (harness, passphrases)
    }

    /// The input of `tresor note passphrase reset --passcode-stdin`: the passcode, then `new` twice.
    func reset(to new: String) -> String { "\(Self.passcode)\n\(new)\n\(new)\n" }

    /// Whether note `id` opens with `passphrase` alone (every secure session ended first and after).
    func opens(_ harness: Harness, _ id: String, with passphrase: String) throws -> Bool {
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        let shown = try harness.tresor(["note", "show", id, "--passphrase-stdin", "--json"], input: passphrase + "\n")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        return shown.succeeded
    }

    func changeKillingTheDaemon(_ harness: Harness, from old: String, to new: String, after delay: TimeInterval) throws -> Harness.Result {
        try runKillingTheDaemon(harness, ["note", "passphrase", "change", "--passphrase-stdin"], input: "\(old)\n\(new)\n\(new)\n", after: delay)
    }

    /// Runs `tresor arguments` (or `executable`, in `environment`), `input` on its standard
    /// input, and SIGKILLs the daemon `delay` seconds after it started; with no delay, only runs it.
    func runKillingTheDaemon(
        _ harness: Harness, _ arguments: [String], input: String, after delay: TimeInterval?,
        executable: URL = Harness.binaries.appendingPathComponent("tresor"), environment: [String: String]? = nil
    ) throws -> Harness.Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment ?? harness.environment
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        if let delay {
            usleep(useconds_t(delay * 1_000_000))
            harness.killDaemon()
        }
        process.waitUntilEnded()
        return Harness.Result(
            status: process.terminationStatus,
            stdout: String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}
