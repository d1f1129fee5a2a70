import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

/// How commands name an attachment of a note: its id, or a start of its id that no other
/// attachment of the note shares — as ``NoteReference`` names the note.
enum AttachmentReference {
    /// The help text of an attachment argument.
    static let help = ArgumentHelp("The attachment: its id, or a unique start of it (tresor note show lists them).", valueName: "attachment")

    /// The id of the one attachment of note `note` that `reference` names.
    /// - Parameters:
    ///   - reference: an id or an id prefix.
    ///   - note: the note's id.
    ///   - notes: where to look.
    ///   - passphrase: a locked note's passphrase, when its session is not open (a prefix is
    ///     looked up in the note's listing).
    /// - Returns: the attachment's id.
    /// - Throws: `APIError.notFound` when none matches, `ValidationError` listing the candidates
    ///   when several do, and what reading the note throws.
    static func resolve(_ reference: String, ofNote note: String, in notes: Notes, passphrase: String?) throws -> String {
        guard !reference.isEmpty else { throw ValidationError("name an attachment: its id, or the start of it") }
        if NoteReference.isWholeID(reference) { return reference.lowercased() }
        let lowered = reference.lowercased()
        let matches = try notes.show(note, passphrase: passphrase).attachments.filter { $0.id.hasPrefix(lowered) }
        guard matches.count <= 1 else {
            let shown = matches.map { "  \($0.id)  \(TerminalText.printable($0.name))" }
            throw ValidationError(
                "\(matches.count) attachments of note \(note) start with '\(reference)'; give more of the id:\n\(shown.joined(separator: "\n"))")
        }
        guard let only = matches.first else {
            throw APIError(.notFound, "no attachment of note \(note) has an id starting with '\(reference)' (tresor note show \(note) lists them)")
        }
        return only.id
    }
}
