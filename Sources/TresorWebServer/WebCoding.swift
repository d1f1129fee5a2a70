import Foundation
import Hummingbird
import NIOCore
import TresorModel
import TresorProtocol

/// The web API's JSON conventions: dates as ISO 8601, binary values as base64.
enum WebCoding {
    static var encoder: JSONEncoder { JSONStyle.iso8601.encoder }
    static var decoder: JSONDecoder { JSONStyle.iso8601.decoder }

    /// `value` as a JSON response.
    static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A request's JSON body, collected up to `limit` bytes: `413 requestTooLarge` above it,
    /// `400 param` when it is not the documented JSON (without quoting the input).
    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int = WebLimits.jsonBytes) async throws -> T {
        try decode(type, try await body(request, limit: limit))
    }

    /// `data` as the documented JSON, or `400 param` without quoting the input.
    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        guard !data.isEmpty else { throw APIError(.param, "the request needs a JSON body") }
        do {
            return try decoder.decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError(.param, "malformed request body: \"\(key.stringValue.prefix(64))\" is missing")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError(.param, "malformed request body: \"\(context.codingPath.last?.stringValue.prefix(64) ?? "")\" has the wrong type")
        } catch {
            // Other decoding errors may quote the offending value: never pass it on.
            throw APIError(.param, "malformed request body: expected the JSON documented in docs/WEB.md")
        }
    }

    /// A request's raw body, up to `limit` bytes (`413 requestTooLarge` above it).
    static func body(_ request: Request, limit: Int) async throws -> Data {
        do {
            return try await request.collectData(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge(limit)
        }
    }

    static func tooLarge(_ limit: Int) -> APIError {
        APIError(.requestTooLarge, "the request is larger than \(ByteSize(limit))")
    }
}
