import Foundation

/// The JSON `tresor --json` prints (docs/CLI-JSON.md), decoded into the API's types: dates in
/// ISO 8601, an item's `secretBase64` read as its `secret` (`secret` itself is text), and a
/// status's holds' `since`, its `lockedAt`, `unlockedAt` and its login link's dates (ISO 8601 in the CLI's JSON) as the API's seconds.
enum CLIJSON {
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.dataDecodingStrategy = .base64
        let tree = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        return try decoder.decode(T.self, from: try JSONSerialization.data(withJSONObject: secretsAsBase64(tree), options: [.fragmentsAllowed]))
    }

    private static func secretsAsBase64(_ value: Any) -> Any {
        if let array = value as? [Any] { return array.map(secretsAsBase64) }
        guard var object = value as? [String: Any] else { return value }
        for (key, inner) in object { object[key] = secretsAsBase64(inner) }
        if let base64 = object.removeValue(forKey: "secretBase64") { object["secret"] = base64 }
        // The status's dates in seconds since 1970 on the wire type, ISO 8601 as the CLI prints them.
        for (list, field) in [("holds", "since"), ("terminalSessions", "expires")] {
            guard let entries = object[list] as? [[String: Any]] else { continue }
            object[list] = entries.map { entry in
                var entry = entry
                if let text = entry[field] as? String, let date = ISO8601DateFormatter().date(from: text) {
                    entry[field] = date.timeIntervalSince1970
                }
                return entry
            }
        }
        for field in ["lockedAt", "unlockedAt"] {
            if let text = object[field] as? String, let date = ISO8601DateFormatter().date(from: text) { object[field] = date.timeIntervalSince1970 }
        }
        if var link = object["loginLink"] as? [String: Any] {
            for field in ["linkedAt", "staleSince"] {
                if let text = link[field] as? String, let date = ISO8601DateFormatter().date(from: text) { link[field] = date.timeIntervalSince1970 }
            }
            object["loginLink"] = link
        }
        return object
    }
}
