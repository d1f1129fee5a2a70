import Foundation
import Hummingbird
import TresorProtocol

extension WebCoding {
    /// Like ``decode(_:_:limit:)`` for the locked-note routes, which must never be given a
    /// passphrase or a key: a body with a `passphrase`, `passcode` or `key` field is refused
    /// (a client bug that would otherwise send a secret quietly).
    static func decodeWithoutSecret<T: Decodable>(_ type: T.Type, _ request: Request, limit: Int = WebLimits.jsonBytes) async throws -> T {
        try decodeWithoutSecret(type, try await body(request, limit: limit))
    }

    /// ``decodeWithoutSecret(_:_:limit:)`` of a body already read.
    static func decodeWithoutSecret<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        if let fields = try? decoder.decode(SecretFields.self, from: data), fields.present {
            throw APIError(.param, "the server never takes a passphrase or a key: send only what docs/WEB.md lists")
        }
        return try decode(type, data)
    }

    /// Whether a JSON object has a field that would carry a secret, whatever its value.
    private struct SecretFields: Decodable {
        var present: Bool

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        static let names = ["passphrase", "passcode", "key", "noteKey", "passphraseKey", "password"]

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            present = Self.names.contains { container.contains(Key(stringValue: $0)) }
        }
    }
}
