import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Damaged SQLite side files (docs/SECURITY.md, §5): after a crash the `-wal` holds the latest commits and
/// the `-shm` its index. Garbage in `-shm`, a `-wal` cut mid-frame, a flipped byte in a `-wal`
/// frame, or a destroyed `-wal` header must never make the daemon fail to start or return
/// wrong data: everything checkpointed before stays readable, and each later item or note is
/// either there and intact or cleanly absent (SQLite drops WAL frames whose checksums fail,
/// and every frame after them).
@Suite(.blocksItsThread, .serialized) struct DamagedSideFilesTests {
    static let passcode = "e2e-sidefiles-passcode"
    static let checkpointedItems = 8, walItems = 8, checkpointedNotes = 3, walNotes = 3

    enum Damage: String, CaseIterable, CustomStringConvertible {
        case shmGarbage, walCutMidFrame, walFlippedByte, walHeaderDestroyed
        var description: String { rawValue }

        func apply(to database: URL) throws {
            let wal = URL(fileURLWithPath: database.path + "-wal"), shm = URL(fileURLWithPath: database.path + "-shm")
            switch self {
            case .shmGarbage:
                let size = max(32_768, (try? Data(contentsOf: shm).count) ?? 0)
                try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }).write(to: shm)
            case .walCutMidFrame:
                let bytes = try Data(contentsOf: wal)
                try bytes.prefix(32 + (bytes.count - 32) / 2 + 100).write(to: wal)
            case .walFlippedByte:
                var bytes = try Data(contentsOf: wal)
                bytes[32 + (bytes.count - 32) / 2] ^= 0x40
                try bytes.write(to: wal)
            case .walHeaderDestroyed:
                var bytes = try Data(contentsOf: wal)
                for index in 0..<32 { bytes[index] = 0xA5 }
                try bytes.write(to: wal)
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func damagedSideFilesLoseNothingCheckpointedAndServeNothingWrong(damage: Damage) throws {
        let harness = try Harness.initialized(passcode: Self.passcode)
        var notes: [String: String] = [:]  // id → body
        func addItems(_ range: Range<Int>) throws {
            for index in range {
                #expect(
                    try harness.tresor(
                        ["item", "add", "--service", "side", "--account", "a\(index)", "--readable-by-scripts", "--secret-stdin"],
                        input: "secret-\(index)\n"
                    ).succeeded)
            }
        }
        func addNotes(_ count: Int) throws {
            for _ in 0..<count {
                let body = "side-note-\(UUID().uuidString)"
                notes[try harness.json(NoteSummary.self, ["note", "new", "--title", "side", "--body-stdin"], input: body).id] = body
            }
        }
        try addItems(0..<Self.checkpointedItems)
        try addNotes(Self.checkpointedNotes)
        let checkpointedNoteIDs = Set(notes.keys)
        // The daemon folds each database's WAL into the main file when it opens it: what was
        // written before this restart is checkpointed.
        harness.killDaemon()
        try harness.startDaemon()
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        try addItems(Self.checkpointedItems..<(Self.checkpointedItems + Self.walItems))
        try addNotes(Self.walNotes)
        harness.killDaemon()  // the latest commits stay in -wal

        for database in [harness.paths.loginKeychain, harness.paths.notesDatabase] {
            #expect(FileManager.default.fileExists(atPath: database.path + "-wal"), "\(database.lastPathComponent) should have a WAL after a crash")
            try damage.apply(to: database)
        }

        try harness.startDaemon()
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        var walItemsPresent = 0
        for index in 0..<(Self.checkpointedItems + Self.walItems) {
            let result = try harness.tresor(["item", "get", "--service", "side", "--account", "a\(index)"])
            if result.succeeded {
                #expect(result.stdout == "secret-\(index)", "item \(index) came back altered")
                if index >= Self.checkpointedItems { walItemsPresent += 1 }
            } else {
                #expect(index >= Self.checkpointedItems, "checkpointed item \(index) was lost: \(result.stderr)")
                #expect(result.stderr.contains("no item matches"), "item \(index): \(result.stderr)")
            }
        }
        let listed = try harness.json([NoteSummary].self, ["note", "list"])
        #expect(checkpointedNoteIDs.isSubset(of: Set(listed.map(\.id))), "a checkpointed note was lost")
        for note in listed {
            #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).body == notes[note.id], "note \(note.id) came back altered")
        }
        if damage == .shmGarbage {
            // The index is rebuilt from the WAL: nothing at all is lost.
            #expect(walItemsPresent == Self.walItems && listed.count == notes.count)
        }
        #expect(harness.daemonIsRunning)
        // And the home works on: new writes succeed.
        try addItems(100..<101)
        #expect(try harness.tresor(["item", "get", "--service", "side", "--account", "a100"]).stdout == "secret-100")
    }
}
