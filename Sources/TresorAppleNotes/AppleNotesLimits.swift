/// Bounds on what the reader accepts from a NoteStore, so a hostile or damaged file costs
/// bounded memory and time. Exceeding one skips the note (``AppleNotesError/tooLarge(_:)``),
/// except ``maxNotes``, which refuses the whole file.
public struct AppleNotesLimits: Sendable, Equatable {
    /// The most notes one database may hold.
    public var maxNotes: Int
    /// The largest stored note body (`ZDATA`: gzipped, or for a locked note its ciphertext).
    public var maxNoteDataBytes: Int
    /// The largest a note body may become once gunzipped (zip bombs stop here).
    public var maxDecompressedBytes: Int
    /// The deepest nesting of protobuf messages (and groups) decoded in a note body.
    public var maxProtobufDepth: Int
    /// The highest PBKDF2 iteration count a locked note may declare (it must be at least 1).
    /// A higher count would make opening the note a denial of service.
    public var maxIterationCount: Int

    /// Limits; the defaults are far above what Apple Notes writes.
    public init(
        maxNotes: Int = 200_000,
        maxNoteDataBytes: Int = 16 << 20,
        maxDecompressedBytes: Int = 64 << 20,
        maxProtobufDepth: Int = 32,
        maxIterationCount: Int = 10_000_000
    ) {
        self.maxNotes = maxNotes
        self.maxNoteDataBytes = maxNoteDataBytes
        self.maxDecompressedBytes = maxDecompressedBytes
        self.maxProtobufDepth = maxProtobufDepth
        self.maxIterationCount = maxIterationCount
    }

    /// 200,000 notes, 16 MiB stored and 64 MiB gunzipped per body, protobuf depth 32,
    /// at most 10,000,000 PBKDF2 iterations.
    public static let `default` = AppleNotesLimits()
}
