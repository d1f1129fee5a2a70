import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat

extension Request {
    /// The whole body as `Data`, up to `limit` bytes (`NIOTooManyBytesError` beyond).
    ///
    /// For an upload (an attachment: up to 256 MiB) this keeps one copy of the body in memory:
    /// the buffer is sized from `Content-Length` up front, where growing it by doubling copied
    /// it at each step, and the `Data` shares the buffer's storage instead of copying it.
    package func collectData(upTo limit: Int) async throws -> Data {
        var buffer = ByteBuffer()
        if let declared = headers[.contentLength].flatMap(Int.init) {
            guard declared <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
            buffer.reserveCapacity(declared)
        }
        for try await var part in body {
            guard buffer.readableBytes + part.readableBytes <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
            buffer.writeBuffer(&part)
        }
        // Above 256 KiB the Data takes over the buffer's storage (`.automatic`). Writing to that
        // Data would write into the buffer too, so the buffer is not used again: it is ours, made
        // above, and ends here.
        return buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .automatic)
            ?? Data(buffer.readableBytesView)
    }
}
