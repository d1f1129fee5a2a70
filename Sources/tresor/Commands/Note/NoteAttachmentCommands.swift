import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

extension AttachmentKind: ExpressibleByArgument {}

extension NoteCommand {
    struct Attach: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attach",
            abstract: "Attach a file to a note.",
            discussion: """
                A locked note takes only image, drawing, table, map-location and website-link \
                attachments, and needs its passphrase's session (asked for when closed).
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Option(help: "The kind: image, drawing, table, map-location, website-link, audio, pdf or file.") var kind: AttachmentKind
        @Option(help: "The file to attach.") var file: String
        @Option(help: "The attachment's name (default: the file's name); - to type it or read it from standard input.") var name: String?
        @Flag(help: "Leave it out of backups (tresor note attachment-backup changes it later).") var excludeFromBackup = false

        mutating func run() throws {
            try Output.run(options) {
                let url = URL(fileURLWithPath: file)
                try checkAttachmentFile(url)
                name = try AskedText.resolve(name, prompt: "Attachment name:", oneLine: true)
                if name?.isEmpty == true { throw ValidationError("the attachment name is empty") }
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                // A locked note's session must be open before the upload, which carries no passphrase.
                try unlocker.withPassphrase { try notes.openSession(note: id, passphrase: $0) }
                let attachment = try notes.addAttachment(
                    to: id, kind: kind, name: name ?? url.lastPathComponent, file: url, excludedFromBackup: excludeFromBackup)
                if options.json { return Output.json(attachment) }
                print("Attached \(attachment.id) (\(attachment.kind.rawValue), \(attachment.byteCount) bytes) to note \(id).")
            }
        }
    }

    struct ExportAttachment: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-attachment",
            abstract: "Write an attachment's bytes to a file (mode 0600) or to standard output (--out -).",
            discussion: """
                The bytes are written as they arrive, a piece at a time, so an attachment of any size \
                takes a few MiB of memory: to a hidden file beside the target (.NAME.tmp-PID), synced \
                to disk and renamed to the target once every byte came, so the target is whole or \
                not there. If the export fails part way, the hidden file is removed and an existing \
                file overwritten with --force stays as it was (if tresor is killed, the hidden file \
                may stay); on standard output, what was written stays and the exit status says it \
                failed.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: NoteSecretOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Argument(help: AttachmentReference.help) var attachment: String
        @Option(help: "Where to write it; - for standard output.") var out: String
        @Flag(help: "Overwrite the file if it exists.") var force = false

        func run() throws {
            try Output.run(options) {
                let target = out == "-" ? nil : URL(fileURLWithPath: out)
                if let target, SecureFiles.isDirectory(target) {
                    throw ValidationError("\(target.path) is a folder: give the file's path (\(target.path)/NAME)")
                }
                if let target, !force, SecureFiles.exists(target) {
                    throw ValidationError("\(target.path) exists; pass --force to overwrite it")
                }
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                var unlocker = NoteUnlocker(notes: notes, options: secrets)
                let exported = try unlocker.withPassphrase { passphrase in
                    let attachment = try AttachmentReference.resolve(attachment, ofNote: id, in: notes, passphrase: passphrase)
                    guard let target else {
                        return try notes.readAttachment(attachment, of: id, passphrase: passphrase) { piece in
                            if let code = piece.write(toDescriptor: StandardStream.output.rawValue) {
                                throw SecureFileError.systemCall("write", path: "standard output", errno: code)
                            }
                        }
                    }
                    return try Self.export(attachment, of: id, passphrase: passphrase, to: target, replacing: force, notes: notes)
                }
                guard let target else { return }
                if options.json { return Output.json(["id": exported.id, "name": exported.name, "path": target.path]) }
                print("Wrote \(exported.byteCount) bytes to \(target.path).")
            }
        }

        /// Writes the attachment as its pieces arrive to a file beside `target`, moved to `target`
        /// once every byte came and is on disk (`replacing`: over what is there; otherwise only if
        /// nothing is): a file at `target` is always whole. On any error — refused, cut short, a
        /// full disk — the file is removed and what was at `target` stays.
        static func export(
            _ attachment: String, of note: String, passphrase: String?, to target: URL, replacing: Bool, notes: Notes
        ) throws -> ReceivedAttachment {
            let file = replacing ? try ExclusiveFile(replacing: target) : try ExclusiveFile(creatingOnCommit: target)
            do {
                let received = try notes.readAttachment(attachment, of: note, passphrase: passphrase) { try file.append($0) }
                try file.commit()
                return received
            } catch SecureFileError.systemCall("rename", _, EEXIST) where !replacing {
                throw ValidationError("\(target.path) came to exist during the export; pass --force to overwrite it")
            } catch {
                file.abandon()
                throw error
            }
        }
    }
}

extension NoteCommand {
    struct AttachmentBackup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "attachment-backup",
            abstract: "Leave an attachment out of backups (--exclude), or put it back in (--include).",
            discussion: "Backups count what they leave out and say so; a restore reports it as excluded.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: NoteReference.help, completion: Completion.notes) var id: String
        @Argument(help: AttachmentReference.help) var attachment: String
        @Flag(help: "Leave it out of backups.") var exclude = false
        @Flag(help: "Put it back into backups.") var include = false

        func validate() throws {
            guard exclude != include else { throw ValidationError("give one of --exclude and --include") }
        }

        func run() throws {
            try Output.run(options) {
                let notes = try options.notes()
                let id = try NoteReference.resolve(self.id, in: notes)
                let attachment = try AttachmentReference.resolve(attachment, ofNote: id, in: notes, passphrase: nil)
                let info = try notes.setExcludedFromBackup(attachment, of: id, excluded: exclude)
                if options.json { return Output.json(info) }
                print("Attachment \(info.id) is \(exclude ? "left out of" : "part of") backups.")
            }
        }
    }
}

/// A file to attach: a regular file within the daemon's limit (it is sent a piece at a time).
func checkAttachmentFile(_ url: URL) throws {
    var info = stat()
    guard stat(url.path, &info) == 0 else { throw ValidationError("cannot read \(url.path): \(String(cString: strerror(errno)))") }
    guard (info.st_mode & S_IFMT) == S_IFREG else { throw ValidationError("cannot attach \(url.path): it is not a regular file") }
    guard access(url.path, R_OK) == 0 else { throw ValidationError("cannot read \(url.path): \(String(cString: strerror(errno)))") }
    guard info.st_size <= NotesWire.maximumAttachmentRequestBytes else {
        throw ValidationError("\(url.path) is larger than \(NotesWire.maximumAttachmentRequestBytes) bytes")
    }
}
