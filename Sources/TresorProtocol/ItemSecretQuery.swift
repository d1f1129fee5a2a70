import FoundationEssentials
import TresorModel

/// `GET /v1/items/secret?class=genp&service=…&account=…` — `SecItemCopyMatching` for one item's
/// data: the secret of the first item whose attributes match, as the answer's raw bytes.
///
/// The lookup applications make most (a password by its service and account) without JSON on
/// either side: the two JSON coders were most of what a lookup through `POST /v1/items/search`
/// cost beyond the socket and the keychain (BENCHMARKS.md §1). The query string names the item
/// class and attributes by their JSON names, each value percent-encoded UTF-8 (RFC 3986; `+` is a
/// plus). It takes text and integer attributes only; a query with any other attribute, an id, a
/// passcode or more than one result goes through `POST /v1/items/search`, which takes them all.
/// Both sides spell the query here, once.
public enum ItemSecretQuery {
    /// The text attributes the query string takes, by wire name.
    static let textAttributes: [(name: String, keyPath: WritableKeyPath<ItemAttributes, String?> & Sendable)] = [
        ("accessGroup", \.accessGroup), ("label", \.label), ("description", \.description), ("comment", \.comment),
        ("account", \.account), ("service", \.service), ("server", \.server), ("protocol", \.protocol), ("path", \.path),
        ("authenticationType", \.authenticationType), ("securityDomain", \.securityDomain),
        ("subjectSummary", \.subjectSummary), ("keyType", \.keyType),
    ]

    /// The integer attributes the query string takes, by wire name.
    static let integerAttributes: [(name: String, keyPath: WritableKeyPath<ItemAttributes, Int?> & Sendable)] = [
        ("port", \.port), ("certificateType", \.certificateType), ("certificateEncoding", \.certificateEncoding),
        ("keySizeInBits", \.keySizeInBits), ("effectiveKeySize", \.effectiveKeySize),
    ]

    /// The route's path and query string for the secret of the first item matching `query`, or
    /// nil when `query` needs `POST /v1/items/search` (an id, or an attribute that is not text or
    /// an integer). `limit`, `returnData` and `returnAttributes` are this route's own.
    public static func path(for query: ItemQuery, keychain: String? = nil) -> String? {
        guard query.id == nil else { return nil }
        var taken = ItemAttributes()
        var parameters = [("class", query.itemClass.rawValue)]
        if let keychain { parameters.append(("keychain", keychain)) }
        for (name, keyPath) in textAttributes {
            if let value = query.attributes[keyPath: keyPath] {
                taken[keyPath: keyPath] = value
                parameters.append((name, value))
            }
        }
        for (name, keyPath) in integerAttributes {
            if let value = query.attributes[keyPath: keyPath] {
                taken[keyPath: keyPath] = value
                parameters.append((name, String(value)))
            }
        }
        // Anything the lists above do not take is still set in the query: it needs the JSON route.
        guard taken == query.attributes else { return nil }
        return Route.itemSecret + "?" + parameters.map { PercentEncoding.encode($0) + "=" + PercentEncoding.encode($1) }.joined(separator: "&")
    }

    /// The query (one result, its data only) and keychain a query string asks for. Unknown,
    /// repeated and malformed parameters are refused (`param`), as unknown attribute names are in
    /// a JSON query: ignoring one would match more items than asked.
    public static func parse(_ queryString: String) throws -> (query: ItemQuery, keychain: String?) {
        var itemClass: ItemClass?
        var keychain: String?
        var attributes = ItemAttributes()
        var seen = Set<String>()
        for parameter in queryString.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = PercentEncoding.decode(String(parts[0])), let value = PercentEncoding.decode(String(parts[1])) else {
                throw APIError(.param, "a query parameter is not name=value in percent-encoded UTF-8")
            }
            guard seen.insert(name).inserted else { throw APIError(.param, "query parameter \(quoted(name)) appears twice") }
            if name == "class" {
                guard let parsed = ItemClass(rawValue: value) else {
                    throw APIError(.param, "unknown item class \(quoted(value)) (one of \(ItemClass.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                itemClass = parsed
            } else if name == "keychain" {
                keychain = value
            } else if let text = textAttributes.first(where: { $0.name == name }) {
                attributes[keyPath: text.keyPath] = value
            } else if let integer = integerAttributes.first(where: { $0.name == name }) {
                guard let number = Int(value) else { throw APIError(.param, "\(name) must be an integer") }
                attributes[keyPath: integer.keyPath] = number
            } else {
                throw APIError(.param, "\(quoted(name)) is not an attribute this route takes (text and integer attributes only; use POST \(Route.searchItems))")
            }
        }
        guard let itemClass else { throw APIError(.param, "the class query parameter is missing (genp, inet, cert or keys)") }
        return (ItemQuery(itemClass, attributes: attributes, limit: .one, returnData: true, returnAttributes: false), keychain)
    }

    /// A name from the request, shortened and quoted for an error message.
    private static func quoted(_ text: String) -> String {
        String(text.prefix(64)).debugDescription
    }
}
