import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol
import TresorSystem

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import notes or secrets from another app.",
        subcommands: [AppleNotesImport.self, SecretServiceImport.self])
}

struct AppleNotesImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-notes",
        abstract: "Import the notes of an Apple Notes database (NoteStore.sqlite).",
        discussion: """
            On a Mac the database is in ~/Library/Group Containers/group.com.apple.notes/ \
            (quit Notes first, and copy NoteStore.sqlite with its -wal file). Unlocked notes are \
            imported as text into folders of the same names (a nested folder's name is its path, \
            Personal/Recipes), pinned where they were pinned. Locked notes are imported still \
            locked, as Apple encrypted them, and open in Tresor with their Apple passphrase; \
            `tresor note rewrap ID` then moves one to your current passphrase. Importing the \
            same database again adds only what is new. Notes in Apple's Recently Deleted go into \
            Tresor's, for 30 days from the import; notes Apple deleted for good are left out. \
            The file is read by tresor-read-apple-notes, a process of its own with no key and no \
            connection to the daemon, and is never written to; the daemon receives the notes, not \
            the file.
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The NoteStore.sqlite file.") var path: String

    /// Notes per request: well under the daemon's 64 MiB import limit even for large notes.
    static let batchBytes = 8 * 1024 * 1024

    func run() throws {
        try Output.run(options) {
            let reading = try Self.read(path)
            let (records, oversize) = Self.sendable(reading.notes)
            let notes = try options.notes()
            var report = ImportReport(refused: oversize)
            var progress = ProgressBar.enabled ? ProgressBar(label: "Importing") : nil
            for batch in Self.batches(records) {
                let part = try notes.importNotes(batch)
                report.imported += part.imported
                report.locked += part.locked
                report.recentlyDeleted += part.recentlyDeleted
                report.alreadyImported += part.alreadyImported
                report.refused += part.refused
                progress?.update(done: report.imported + report.alreadyImported + report.refused.count, total: reading.notes.count)
            }
            progress?.finish()
            if options.json {
                return Output.json(
                    AppleImportOutput(report: report, unreadable: reading.unreadable, unreadWriteAheadLog: reading.unreadWriteAheadLog))
            }
            print("Imported \(Words.counted(report.imported, "note")) (\(report.locked) still locked with their Apple passphrase).")
            if report.recentlyDeleted > 0 {
                print(
                    "\(Words.counted(report.recentlyDeleted, "note")) went into Recently Deleted, where Apple Notes had them: "
                        + "tresor note trash list shows them for 30 days.")
            }
            if report.alreadyImported > 0 { print("\(Words.counted(report.alreadyImported, "note")) had been imported before.") }
            for line in report.refused { print("Refused \(TerminalText.printable(line))") }
            for line in reading.unreadable { print("Could not read \(TerminalText.printable(line))") }
            if reading.unreadWriteAheadLog {
                print("Note: NoteStore.sqlite-wal holds changes not yet in the database; quit Notes and import again to include them.")
            }
        }
    }

    /// The notes of the database at `path`, as `tresor-read-apple-notes` reads them. Its
    /// complaint about a bad file becomes this command's error.
    static func read(_ path: String) throws -> AppleNotesReading {
        // Absolute, so a file named like an option (`-x`) is still read as a file.
        try CompanionProcess.readJSON(
            AppleNotesReading.self, from: CompanionExecutable.appleNotesReader, arguments: [URL(fileURLWithPath: path).path])
    }

    /// The notes to send, and a refusal line for each the daemon would refuse for its size alone
    /// (``NoteImport/sizeRefusal``): those are not sent, so one outsized note cannot make a
    /// request larger than the daemon reads and stop the import.
    static func sendable(_ records: [NoteImport]) -> (records: [NoteImport], refused: [String]) {
        var sendable: [NoteImport] = []
        var refused: [String] = []
        for record in records {
            if let reason = record.sizeRefusal {
                refused.append(ImportReport.refusal(title: record.title, reason: reason))
            } else {
                sendable.append(record)
            }
        }
        return (sendable, refused)
    }

    /// Splits records into requests of about `batchBytes` each.
    static func batches(_ records: [NoteImport]) -> [[NoteImport]] {
        requestBatches(records, maxBytes: batchBytes) { record in
            switch record.content {
            case .text(let text): text.utf8.count * 2 + 512
            case .appleLocked(let fields): fields.ciphertext.count * 4 / 3 + 1024
            }
        }
    }
}

/// `--json` output of an import.
struct AppleImportOutput: Encodable {
    var report: ImportReport
    var unreadable: [String]
    var unreadWriteAheadLog: Bool
}
