import Foundation

extension AttachmentWriter {
    /// Appends a streamed body as it arrives, in pieces of one sealed chunk's plaintext
    /// (``LockedNoteShape/chunkByteCount``), never holding more than one piece: how the web's
    /// and the devices' attachment uploads reach a store.
    /// - Parameters:
    ///   - body: the body's parts as they arrive (a request body's buffers, as bytes).
    ///   - limit: the most bytes taken.
    ///   - tooLarge: the error for a body past `limit`.
    /// - Returns: the bytes appended.
    /// - Throws: `tooLarge()`, the body's error, the store's.
    public func append<Body: AsyncSequence, Part: Collection<UInt8>>(
        streaming body: Body, limit: Int, tooLarge: () -> any Error
    ) async throws -> Int where Body.Element == Part {
        let pieceBytes = LockedNoteShape.chunkByteCount
        var pending = Data()
        var count = 0
        for try await part in body {
            count += part.count
            guard count <= limit else { throw tooLarge() }
            pending.append(contentsOf: part)
            while pending.count >= pieceBytes {
                try await append(pending.prefix(pieceBytes))
                pending = Data(pending.dropFirst(pieceBytes))
            }
        }
        if !pending.isEmpty { try await append(pending) }
        return count
    }
}
