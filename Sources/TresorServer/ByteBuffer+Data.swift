import Foundation
import NIOCore
import NIOFoundationCompat

extension ByteBuffer {
    /// The readable bytes as `Data`. A large body (an attachment: up to 256 MiB) shares the
    /// buffer's storage instead of being copied, which kept a second copy of every upload in
    /// the daemon's memory until the request ended.
    var wholeData: Data {
        getData(at: readerIndex, length: readableBytes, byteTransferStrategy: .automatic) ?? Data(readableBytesView)
    }
}
