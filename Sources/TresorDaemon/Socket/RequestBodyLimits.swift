import TresorProtocol

/// The largest request body each route takes. Most take the API's 1 MiB and get their body
/// whole before they run; a note's create and edit take more, whole too (`wholeByPath`); a route
/// with a much larger limit (an attachment, an import) runs as soon as its head arrives and reads
/// the body as it comes, so it can refuse a client before the daemon reads hundreds of megabytes
/// from it.
struct RequestBodyLimits: Sendable {
    var standard: Int
    var largerByPath: [String: Int]
    var wholeByPath: [String: Int] = [:]

    func limit(forPath path: String) -> (bytes: Int, streamed: Bool) {
        if let larger = largerByPath[path] { return (larger, true) }
        if let whole = wholeByPath[path] { return (whole, false) }
        return (standard, false)
    }

    /// The most any route takes whole: what a route reading its body whole may collect.
    static let largestWhole = max(APIVersion.maximumRequestBytes, NotesWire.maximumNoteRequestBytes)
}

extension RequestBodyLimits {
    /// The socket API's: 1 MiB, more for a note's create and edit, for an attachment
    /// (`attachmentBytes`, the daemon's `notesAttachmentBytes`) and for an import of notes.
    static func socketAPI(attachmentBytes: Int) -> RequestBodyLimits {
        RequestBodyLimits(
            standard: APIVersion.maximumRequestBytes,
            largerByPath: [
                Route.notesAddAttachment: attachmentBytes,
                Route.notesImport: NotesWire.maximumImportRequestBytes,
            ],
            wholeByPath: [Route.notesCreate: NotesWire.maximumNoteRequestBytes, Route.notesEdit: NotesWire.maximumNoteRequestBytes])
    }
}
