import FoundationEssentials
import Testing
import TresorModel
import TresorProtocol

/// The query string of `GET /v1/items/secret`: what the client writes the daemon reads back
/// exactly; queries the route cannot express go to `POST /v1/items/search`; anything unknown,
/// repeated or malformed is refused rather than ignored.
@Suite("The secret route's query string")
struct ItemSecretQueryTests {
    func password(_ service: String, _ account: String) -> ItemQuery {
        var query = ItemQuery(.genericPassword)
        (query.attributes.service, query.attributes.account) = (service, account)
        return query
    }

    func parsed(_ path: String?) throws -> (query: ItemQuery, keychain: String?) {
        let (query, keychain, _) = try parsedWithUniqueness(path)
        return (query, keychain)
    }

    func parsedWithUniqueness(_ path: String?) throws -> (query: ItemQuery, keychain: String?, unique: Bool) {
        let path = try #require(path)
        #expect(path.hasPrefix(Route.itemSecret + "?"))
        return try ItemSecretQuery.parse(String(path.dropFirst(Route.itemSecret.count + 1)))
    }

    /// `GET /v1/items/attributes` takes the same query string: every match, attributes only;
    /// `unique` is the secret route's alone.
    @Test func theAttributesRouteReadsTheSameQueryString() throws {
        var query = ItemQuery(.internetPassword)
        (query.attributes.label, query.attributes.server, query.attributes.port) = ("Deploy & ünï = 100%", "example.com", 8443)
        let path = try #require(ItemSecretQuery.attributesPath(for: query, keychain: "work"))
        #expect(path.hasPrefix(Route.itemAttributes + "?"))
        let (parsed, keychain) = try ItemSecretQuery.parseAttributesQuery(String(path.dropFirst(Route.itemAttributes.count + 1)))
        #expect(parsed.itemClass == .internetPassword && parsed.attributes == query.attributes && keychain == "work")
        #expect(parsed.limit == .all && !parsed.returnData && parsed.returnAttributes)
        #expect(throws: APIError.self) { try ItemSecretQuery.parseAttributesQuery("class=genp&label=x&unique=1") }
        #expect(throws: APIError.self) { try ItemSecretQuery.parseAttributesQuery("class=genp&lable=x") }
        query.attributes.generic = Data([1])
        #expect(ItemSecretQuery.attributesPath(for: query) == nil)
    }

    /// `unique=1`: every match, so the daemon can refuse a query that names several items.
    @Test func aUniqueQueryAsksForEveryMatch() throws {
        let query = password("github.com", "ada")
        let unique = try parsedWithUniqueness(ItemSecretQuery.path(for: query, unique: true))
        #expect(unique.unique && unique.query.limit == .all && unique.query.attributes == query.attributes)
        let plain = try parsedWithUniqueness(ItemSecretQuery.path(for: query))
        #expect(!plain.unique && plain.query.limit == .one)
        #expect(throws: APIError.self) { try ItemSecretQuery.parse("class=genp&unique=yes") }
        let one = KeychainItem(id: "1", itemClass: .genericPassword, attributes: nil, secret: Data("s".utf8))
        #expect(try ItemSecretQuery.onlySecret(of: [one]) == Data("s".utf8))
        #expect(throws: APIError(.param, "2 items match; name one (another attribute, or its id)")) {
            try ItemSecretQuery.onlySecret(of: [one, one])
        }
        #expect(throws: APIError(.itemNotFound, "no item matches")) { try ItemSecretQuery.onlySecret(of: []) }
    }

    @Test func whatTheClientWritesTheDaemonReadsBack() throws {
        for value in ["plain", "a b&c=d", "100% +sure", "Résumé/🔐", "", "line\nbreak", "?#[]"] {
            var query = password(value, "me@example.com")
            query.attributes.accessGroup = "TEAM.group"
            query.attributes.label = value
            let (back, keychain) = try parsed(ItemSecretQuery.path(for: query, keychain: "work & home"))
            #expect(back.attributes == query.attributes)
            #expect(back.itemClass == .genericPassword && keychain == "work & home")
            #expect(back.limit == .one && back.returnData && !back.returnAttributes, "one result, its data only")
        }
        var web = ItemQuery(.internetPassword)
        (web.attributes.server, web.attributes.port, web.attributes.protocol, web.attributes.account) = ("example.com", 8443, "htps", "ci")
        let back = try parsed(ItemSecretQuery.path(for: web))
        #expect(back.query.attributes == web.attributes && back.query.itemClass == .internetPassword && back.keychain == nil)
    }

    @Test func queriesTheRouteCannotExpressGoToTheJSONRoute() {
        var query = password("s", "a")
        #expect(ItemSecretQuery.path(for: query) != nil)
        query.id = "42"
        #expect(ItemSecretQuery.path(for: query) == nil, "an id")
        for change in [
            { (a: inout ItemAttributes) in a.synchronizable = true },
            { $0.generic = Data([1, 2]) },
            { $0.accessible = .whenUnlocked },
            { $0.accessControl = .userPresence },
            { $0.custom = ["k": "v"] },
            { $0.creator = 7 },
        ] as [(inout ItemAttributes) -> Void] {
            var other = password("s", "a")
            change(&other.attributes)
            #expect(ItemSecretQuery.path(for: other) == nil)
        }
    }

    @Test(arguments: [
        ("service=s", "the class query parameter is missing"),
        ("class=nope", "unknown item class"),
        ("class=genp&acount=typo", "is not an attribute this route takes"),
        ("class=genp&generic=AQI%3D", "is not an attribute this route takes"),
        ("class=genp&service=a&service=b", "appears twice"),
        ("class=inet&port=eighty", "port must be an integer"),
        ("class=genp&service=%zz", "not name=value"),
        ("class=genp&service", "not name=value"),
        ("class=genp&service=%C3", "not name=value"),
    ])
    func unknownRepeatedAndMalformedParametersAreRefused(queryString: String, message: String) {
        #expect {
            try ItemSecretQuery.parse(queryString)
        } throws: { error in
            guard let error = error as? APIError else { return false }
            return error.code == .param && error.message.contains(message)
        }
    }
}
