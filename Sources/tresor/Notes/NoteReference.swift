import ArgumentParser
import FoundationEssentials
import TresorKit

/// How commands name a note: its id, a start of its id that no other note's id shares, or its
/// exact title — or `-`, to type the id or title (or read it from standard input) rather than
/// put a title on the command line, where `ps` shows it.
enum NoteReference {
    /// The help text of a note argument.
    static let help = ArgumentHelp(
        "The note: its id, a unique start of it (as git takes commits), or its exact title; - to type it or read it from standard input.",
        valueName: "note")
    /// The help text of an argument naming a note in Recently Deleted.
    static let trashHelp = ArgumentHelp(
        "The note in Recently Deleted: its id, a unique start of it, or its exact title; - to type it.", valueName: "note")

    /// The id of the one note `reference` names.
    /// - Parameters:
    ///   - reference: an id, an id prefix, a title, or `-`.
    ///   - notes: where to look.
    ///   - trash: whether it names a note in Recently Deleted rather than a live one.
    /// - Returns: the note's id.
    /// - Throws: `APIError.notFound` when none matches, `ValidationError` listing the
    ///   candidates when several do (ids and titles; ids and dates for a `-` reference).
    static func resolve(_ reference: String, in notes: Notes, inTrash trash: Bool = false) throws -> String {
        // A title kept off the command line stays out of the error too (a script's error output
        // may go to a log): the candidates are then told apart by id and when each was changed.
        let asked = reference == AskedText.marker
        let reference = try AskedText.resolve(reference, prompt: "Note (id or title):") ?? reference
        guard !reference.isEmpty else { throw ValidationError("name a note: its id, the start of it, or its title") }
        if isWholeID(reference) { return reference.lowercased() }
        let all = trash ? try notes.recentlyDeleted() : try notes.list()
        let lowered = reference.lowercased()
        let matches = all.filter { $0.id.lowercased().hasPrefix(lowered) || $0.title == reference }
        let given = asked ? "the text given" : "'\(reference)'"
        guard matches.count <= 1 else {
            let shown = matches.prefix(20).map { "  \($0.id)  " + (asked ? "changed \(NoteText.date($0.modified))" : $0.title) }
            throw ValidationError(
                "\(matches.count) notes match \(given); give more of the id:\n\(shown.joined(separator: "\n"))" + (matches.count > 20 ? "\n  …" : ""))
        }
        guard let only = matches.first else {
            // A note moved to Recently Deleted is not gone: said so, with the way back.
            if !trash, let deleted = try? notes.recentlyDeleted().filter({ $0.id.lowercased().hasPrefix(lowered) || $0.title == reference }),
                deleted.count == 1, let note = deleted.first
            {
                throw APIError(.notFound, "note \(note.id) is in Recently Deleted: `tresor note trash restore \(note.id)` brings it back")
            }
            throw APIError(.notFound, "no note\(trash ? " in Recently Deleted" : "")'s id starts with \(given), and none has it as its title")
        }
        return only.id
    }

    /// Whether `text` is a whole note id (a UUID), which needs no lookup.
    static func isWholeID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
