import Foundation
import Hummingbird
import NIOCore
import Testing

@testable import TresorWebServer

/// `Request.collectData(upTo:)` hands an upload to the stores: the same bytes whether the body
/// came whole or in parts, with or without a `Content-Length`, and nothing past the limit.
@Suite struct RequestDataTests {
    static func request(_ parts: [[UInt8]], declaring length: Int? = nil) -> Request {
        var fields = HTTPFields()
        if let length { fields[.contentLength] = String(length) }
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        for part in parts { continuation.yield(ByteBuffer(bytes: part)) }
        continuation.finish()
        return Request(
            head: HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload", headerFields: fields),
            body: RequestBody(asyncSequence: stream))
    }

    static func bytes(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 31) }
    }

    @Test(arguments: [0, 1, 1000, 256 * 1024 + 1, 3_000_000])
    func theBodyExactlyInPartsWithAndWithoutALength(count: Int) async throws {
        let all = Self.bytes(count)
        let parts = stride(from: 0, to: count, by: 65_536).map { Array(all[$0..<min($0 + 65_536, count)]) }
        for declared in [Int?.none, count] {
            let data = try await Self.request(parts, declaring: declared).collectData(upTo: 3_000_000)
            #expect(data == Data(all))
            #expect(data.startIndex == 0)
        }
    }

    @Test func nothingPastTheLimit() async throws {
        await #expect(throws: NIOTooManyBytesError.self) {
            try await Self.request([Self.bytes(10)], declaring: 101).collectData(upTo: 100)  // said so up front
        }
        await #expect(throws: NIOTooManyBytesError.self) {
            try await Self.request([Self.bytes(60), Self.bytes(41)]).collectData(upTo: 100)  // found while reading
        }
        #expect(try await Self.request([Self.bytes(60), Self.bytes(40)]).collectData(upTo: 100).count == 100)
    }
}
