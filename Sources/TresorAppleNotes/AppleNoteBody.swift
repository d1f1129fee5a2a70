import Foundation
internal import SwiftProtobuf

/// Apple Notes' note body: a gzipped protobuf (`NoteStoreProto`, see Proto/notestore.proto)
/// whose note text is at field path 2 → 3 → 2.
public enum AppleNoteBody {
    /// The note text of a gzipped note body: `ZDATA` of an unlocked note, or the decrypted
    /// plaintext of a locked note's ciphertext.
    ///
    /// gunzips within ``AppleNotesLimits/maxDecompressedBytes``, then decodes the protobuf with
    /// SwiftProtobuf within ``AppleNotesLimits/maxProtobufDepth``, ignoring unknown fields
    /// (formatting, attachments…). Throws ``AppleNotesError/tooLarge(_:)`` past a limit and
    /// ``AppleNotesError/damagedBody(_:)`` for anything else wrong: not gzip, truncated or
    /// corrupt gzip, malformed protobuf, no field 2 → 3 → 2, text that is not UTF-8.
    public static func text(fromGzippedProtobuf data: Data, limits: AppleNotesLimits = .default) throws -> String {
        try decodeText(data, limits: limits)
    }

    /// The note as Tresor Markdown (docs/FORMAT.md, "Note bodies"): its text with the
    /// formatting of its attribute runs — paragraph styles (title, heading, subheading,
    /// monospace, bulleted, dashed and numbered lists, checklists with their done state,
    /// indentation) and font hints (bold, italic), underline, strikethrough and links
    /// (``AppleNoteFormatting``).
    /// - Parameters:
    ///   - data: the gzipped protobuf.
    ///   - limits: the bounds on hostile input.
    /// - Returns: the Markdown.
    /// - Throws: as ``text(fromGzippedProtobuf:limits:)``.
    public static func markdown(fromGzippedProtobuf data: Data, limits: AppleNotesLimits = .default) throws -> String {
        try decodeMarkdown(data, limits: limits)
    }

    static func decodeMarkdown(_ data: Data, limits: AppleNotesLimits) throws(AppleNotesError) -> String {
        let note = try decodeNote(data, limits: limits)
        return AppleNoteFormatting.markdown(text: note.noteText, unknownFields: note.unknownFields.data, limits: limits)
    }

    static func decodeText(_ data: Data, limits: AppleNotesLimits) throws(AppleNotesError) -> String {
        try decodeNote(data, limits: limits).noteText
    }

    /// The note message (field 2 → 3), its text checked to be there; its other fields (the
    /// attribute runs) kept as unknown fields.
    private static func decodeNote(_ data: Data, limits: AppleNotesLimits) throws(AppleNotesError) -> Tresor_Applenotes_Note {
        guard data.count <= limits.maxNoteDataBytes else {
            throw .tooLarge("the note body is \(data.count) bytes, more than \(limits.maxNoteDataBytes)")
        }
        let protobuf = try BoundedGunzip.decompress(data, maxOutputBytes: limits.maxDecompressedBytes)
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = max(limits.maxProtobufDepth, 0)
        options.discardUnknownFields = false
        let body: Tresor_Applenotes_NoteStoreProto
        do {
            body = try Tresor_Applenotes_NoteStoreProto(serializedBytes: protobuf, partial: true, options: options)
        } catch let error as BinaryDecodingError {
            throw .damagedBody(describe(error))
        } catch {
            throw .damagedBody("malformed protobuf")
        }
        guard body.hasDocument else { throw .damagedBody("the protobuf has no document (field 2)") }
        guard body.document.hasNote else { throw .damagedBody("the protobuf document has no note (field 2 → 3)") }
        guard body.document.note.hasNoteText else {
            throw .damagedBody("the protobuf note has no text (field 2 → 3 → 2)")
        }
        return body.document.note
    }

    private static func describe(_ error: BinaryDecodingError) -> String {
        switch error {
        case .truncated: return "truncated protobuf"
        case .invalidUTF8: return "the note text is not valid UTF-8"
        case .messageDepthLimit: return "the protobuf nests messages too deeply"
        case .malformedProtobuf: return "malformed protobuf"
        default: return "malformed protobuf"
        }
    }
}
