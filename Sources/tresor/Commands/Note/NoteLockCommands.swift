import ArgumentParser
import FoundationEssentials
import TresorKit

extension NoteCommand {
    struct Lock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lock",
            abstract: "Lock a note with the notes passphrase.",
            discussion: """
                The body and attachments are encrypted under a new note key wrapped by the \
                passphrase; the plaintext is removed from the home. Only image, drawing, table, \
                map-location and website-link attachments can be locked.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                let note = try unlocker.withPassphrase { try notes.lock(id, passphrase: $0) }
                if options.json { return Output.json(note) }
                print("Locked note \(note.id).")
            }
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock",
            abstract: "Remove a note's lock (its passphrase or session is needed).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                let note = try unlocker.withPassphrase { try notes.removeLock(id, passphrase: $0) }
                if options.json { return Output.json(note) }
                print("Removed the lock of note \(note.id).")
            }
        }
    }

    struct Rewrap: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rewrap",
            abstract: "Re-wrap a note locked with an earlier passphrase under the current one.",
            discussion: "Asks for the note's passphrase, then the current one, unless their sessions are open. Only the note key is re-wrapped.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                try unlocker.withPassphrase { try notes.openSession(note: id, passphrase: $0) }
                let note = try unlocker.withPassphrase { try notes.rewrap(id, currentPassphrase: $0) }
                if options.json { return Output.json(note) }
                print("Re-wrapped note \(note.id) under the current passphrase.")
            }
        }
    }
}
