import FoundationEssentials
import TresorModel

/// `GET /v1/items/secret?class=genp&service=…&account=…` — `SecItemCopyMatching` for one item's
/// data: the secret of the first item whose attributes match, as the answer's raw bytes. The
/// same query string asks `GET /v1/items/attributes` for every match's attributes
/// (``attributesPath(for:keychain:)``, ``ItemAttributesList``).
///
/// The lookup applications make most (a password by its service and account) without JSON on
/// either side: the two JSON coders were most of what a lookup through `POST /v1/items/search`
/// cost beyond the socket and the keychain (BENCHMARKS.md §1). The query string names the item
/// class and attributes by their JSON names, each value percent-encoded UTF-8 (RFC 3986; `+` is a
/// plus). It takes text and integer attributes only; a query with any other attribute, an id, a
/// passcode or more than one result goes through `POST /v1/items/search`, which takes them all.
/// Both sides spell the query here, once. A fast path (docs/ARCHITECTURE.md, "Fast paths and
/// their twins"): `SecretRouteTests.lookupsWithoutJSONAnswerAsTheSearchDoes` holds it to the search.
public enum ItemSecretQuery {
    /// An attribute the query string takes: its wire name, and how to read and set it.
    struct Attribute<Value>: Sendable {
        let name: String
        let get: @Sendable (ItemAttributes) -> Value?
        let set: @Sendable (inout ItemAttributes, Value?) -> Void
    }

    /// The text attributes the query string takes: every text attribute of ``ItemAttribute/all``.
    static let textAttributes: [Attribute<String>] = ItemAttribute.all.compactMap { attribute in
        guard case .text(let get, let set) = attribute.value else { return nil }
        return Attribute(name: attribute.name, get: get, set: set)
    }

    /// The integer attributes the query string takes: every integer attribute.
    static let integerAttributes: [Attribute<Int>] = ItemAttribute.all.compactMap { attribute in
        guard case .integer(let get, let set) = attribute.value else { return nil }
        return Attribute(name: attribute.name, get: get, set: set)
    }

    /// The route's path and query string for the secret of the first item matching `query`, or
    /// nil when `query` needs `POST /v1/items/search` (an id, or an attribute that is not text or
    /// an integer). `limit`, `returnData` and `returnAttributes` are this route's own.
    /// - Parameters:
    ///   - query: the item's class and attributes.
    ///   - keychain: the keychain, nil for the login keychain.
    ///   - unique: the secret only if exactly one item matches (`unique=1`): several are `param`,
    ///     so a script never gets the wrong one.
    public static func path(for query: ItemQuery, keychain: String? = nil, unique: Bool = false) -> String? {
        path(Route.itemSecret, for: query, keychain: keychain, unique: unique)
    }

    /// `GET /v1/items/attributes` with the query string of ``path(for:keychain:unique:)``: the
    /// attributes of every item matching `query` (its `limit`, `returnData` and
    /// `returnAttributes` are the route's own), answered as ``ItemAttributesList``; nil when
    /// `query` needs `POST /v1/items/search`.
    /// - Parameters:
    ///   - query: the items' class and attributes.
    ///   - keychain: the keychain, nil for the login keychain.
    /// - Returns: The route's path and query string, or nil.
    public static func attributesPath(for query: ItemQuery, keychain: String? = nil) -> String? {
        path(Route.itemAttributes, for: query, keychain: keychain, unique: false)
    }

    private static func path(_ route: String, for query: ItemQuery, keychain: String?, unique: Bool) -> String? {
        guard query.id == nil else { return nil }
        var taken = ItemAttributes()
        var parameters = [("class", query.itemClass.rawValue)]
        if let keychain { parameters.append(("keychain", keychain)) }
        if unique { parameters.append(("unique", "1")) }
        for attribute in textAttributes {
            if let value = attribute.get(query.attributes) {
                attribute.set(&taken, value)
                parameters.append((attribute.name, value))
            }
        }
        for attribute in integerAttributes {
            if let value = attribute.get(query.attributes) {
                attribute.set(&taken, value)
                parameters.append((attribute.name, String(value)))
            }
        }
        // Anything the two lists do not take is still set in the query: it needs the JSON route.
        guard taken == query.attributes else { return nil }
        return route + "?" + parameters.map { PercentEncoding.encode($0) + "=" + PercentEncoding.encode($1) }.joined(separator: "&")
    }

    /// The query (its data only; one result, or every match when `unique`), keychain and
    /// uniqueness a query string asks for. Unknown, repeated and malformed parameters are refused
    /// (`param`), as unknown attribute names are in a JSON query: ignoring one would match more
    /// items than asked.
    public static func parse(_ queryString: String) throws -> (query: ItemQuery, keychain: String?, unique: Bool) {
        var itemClass: ItemClass?
        var keychain: String?
        var unique = false
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
                    throw APIError(
                        .param, "unknown item class \(quoted(value)) (one of \(ItemClass.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                itemClass = parsed
            } else if name == "keychain" {
                keychain = value
            } else if name == "unique" {
                guard value == "1" else { throw APIError(.param, "unique takes 1") }
                unique = true
            } else if case .text(_, let set) = ItemAttribute.named[name]?.value {
                set(&attributes, value)
            } else if case .integer(_, let set) = ItemAttribute.named[name]?.value {
                guard let number = Int(value) else { throw APIError(.param, "\(name) must be an integer") }
                set(&attributes, number)
            } else {
                throw APIError(
                    .param, "\(quoted(name)) is not an attribute this route takes (text and integer attributes only; use POST \(Route.searchItems))")
            }
        }
        guard let itemClass else { throw APIError(.param, "the class query parameter is missing (genp, inet, cert or keys)") }
        return (
            ItemQuery(itemClass, attributes: attributes, limit: unique ? .all : .one, returnData: true, returnAttributes: false), keychain, unique
        )
    }

    /// The query (every match, its attributes only) and keychain the query string of
    /// `GET /v1/items/attributes` asks for; refused as ``parse(_:)`` refuses, and `unique`, which
    /// only the secret route takes.
    /// - Parameter queryString: The request's query string, without its `?`.
    /// - Returns: The query and the keychain (nil for the login keychain).
    /// - Throws: `APIError` `param` for a query string the route does not take.
    public static func parseAttributesQuery(_ queryString: String) throws -> (query: ItemQuery, keychain: String?) {
        let (query, keychain, unique) = try parse(queryString)
        guard !unique else { throw APIError(.param, "unique is taken by \(Route.itemSecret) only") }
        return (ItemQuery(query.itemClass, attributes: query.attributes, limit: .all, returnData: false, returnAttributes: true), keychain)
    }

    /// The one secret of `items` for a `unique` query.
    /// - Throws: `itemNotFound` for none, `param` naming the count for several.
    public static func onlySecret(of items: [KeychainItem]) throws -> Data {
        guard items.count <= 1 else {
            throw APIError(.param, "\(items.count) items match; name one (another attribute, or its id)")
        }
        guard let secret = items.first?.secret else { throw APIError(.itemNotFound, "no item matches") }
        return secret
    }

    /// A name from the request, shortened and quoted for an error message.
    private static func quoted(_ text: String) -> String {
        String(text.prefix(64)).debugDescription
    }
}
