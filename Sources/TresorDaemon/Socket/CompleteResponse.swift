import Hummingbird
import NIOCore

/// A response with its whole body.
struct CompleteResponse: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer
}
