// Fuzzes the daemon's request decoding: a JSON body decoded into a TresorProtocol request type
// with `APICoding.requestDecoder` — the decoder the daemon reads every request with, which
// refuses attribute names the keychain does not know while it decodes (`ItemAttributes`'s
// `init(from:)`, switched on by `ItemAttributes.refusesUnknownNames`).
//
// Properties besides "never crash":
//  - the daemon's promise: a request it accepts names no unknown attribute. Checked against
//    the keys JSONDecoder itself saw, level by level (`KeyTree`), so a body whose attributes
//    object the check and the decode could read differently (duplicate keys, odd escapes:
//    Fuzz/Regressions/request-decoding) shows up;
//  - decode ∘ encode is stable: what a client encodes from a decoded request decodes to the same.
//
// Input: selector byte (which route) | JSON body (for `items/secret`, a query string)
import Foundation
import FuzzSupport
import TresorKeychain
import TresorProtocol

let requestDecoder = APICoding.requestDecoder

/// The object keys JSONDecoder sees, level by level (non-objects have none).
struct KeyTree: Decodable {
    struct AnyKey: CodingKey {
        var stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    var children: [String: KeyTree] = [:]

    init(from decoder: Decoder) throws {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return }
        for key in container.allKeys {
            children[key.stringValue] = (try? container.decode(KeyTree.self, forKey: key)) ?? KeyTree()
        }
    }

    init() {}

    func keys(at path: [String]) -> [String]? {
        guard let first = path.first else { return Array(children.keys) }
        return children[first]?.keys(at: Array(path.dropFirst()))
    }
}

struct Route {
    let name: String
    let attributePaths: [[String]]
    /// Decodes the body, re-encodes and re-decodes it; returns the attributes it carries.
    let decode: (Data) throws -> [ItemAttributes]
}

func route<T: Codable>(_ name: String, _ type: T.Type, _ attributePaths: [[String]] = [], attributes: @escaping (T) -> [ItemAttributes] = { _ in [] })
    -> Route
{
    Route(name: name, attributePaths: attributePaths) { data in
        let value = try requestDecoder.decode(T.self, from: data)
        let encoded: Data
        let again: T
        do {
            encoded = try APICoding.encoder.encode(value)
            again = try requestDecoder.decode(T.self, from: encoded)
        } catch {
            fuzzFailure("a decoded \(T.self) does not survive encode + decode: \(error)")
        }
        guard (try? APICoding.encoder.encode(again)) == encoded else {
            fuzzFailure("a decoded \(T.self) changes when encoded and decoded again")
        }
        return attributes(value)
    }
}

let routes: [Route] = [
    route("items/add", AddItemRequest.self, [["attributes"]]) { [$0.attributes] },
    route("items/search", SearchItemsRequest.self, [["query", "attributes"]]) { [$0.query.attributes] },
    route("items/update", UpdateItemsRequest.self, [["query", "attributes"], ["changes"]]) { [$0.query.attributes, $0.changes] },
    route("items/delete", DeleteItemsRequest.self, [["query", "attributes"]]) { [$0.query.attributes] },
    route("init", InitRequest.self),
    route("unlock", UnlockRequest.self),
    route("lock", LockRequest.self),
    route("passcode/change", ChangePasscodeRequest.self),
    route("passcode/remove", RemovePasscodeRequest.self),
    route("holds", HoldRequest.self),
    route("apps", RegisterApplicationRequest.self),
    route("keychains", CreateKeychainRequest.self),
    route("keychains/delete", DeleteKeychainRequest.self),
    // Notes (CLI only, but still bytes from a socket).
    route("notes/create", CreateNoteRequest.self),
    route("notes/show", NoteRequest.self),
    route("notes/edit", EditNoteRequest.self),
    route("notes/search", SearchNotesRequest.self),
    route("notes/rewrap", RewrapNoteRequest.self),
    route("notes/session", OpenSessionRequest.self),
    route("notes/attachments/get", AttachmentRequest.self),
    route("notes/passphrase/change", ChangePassphraseRequest.self),
    route("notes/passphrase/reset", ResetPassphraseRequest.self),
    route("notes/passphrase/keychain", KeychainUnlockRequest.self),
    route("notes/import", ImportNotesRequest.self),
    // The secret route's query string (`GET /v1/items/secret?…`): no JSON, but the same promise —
    // what is accepted names only attributes the route takes, and writing it back reads the same.
    Route(name: "items/secret", attributePaths: []) { data in
        let (query, keychain, unique) = try ItemSecretQuery.parse(String(decoding: data, as: UTF8.self))
        guard let path = ItemSecretQuery.path(for: query, keychain: keychain, unique: unique),
            let again = try? ItemSecretQuery.parse(String(path.dropFirst(TresorProtocol.Route.itemSecret.count + 1))),
            again.query == query, again.keychain == keychain, again.unique == unique
        else { fuzzFailure("a parsed secret query does not survive being written and parsed again") }
        return [query.attributes]
    },
]

/// An empty System Roots: its copyMatching validates a certificate query's attributes
/// (TresorKeychain's internal `validate(for:purpose:)`), then finds nothing.
let emptyRoots = SystemRoots(directory: makeScratchFolder("roots"))

func seeds() -> [String: Data] {
    let bodies: [(Int, String, String)] = [
        (
            0, "add-genp",
            #"{"itemClass":"genp","attributes":{"service":"github.com","account":"ada","label":"GitHub","accessible":"afterFirstUnlock"},"secret":"czNjcjN0"}"#
        ),
        (
            0, "add-inet",
            #"{"keychain":"login","itemClass":"inet","attributes":{"server":"db.example.com","protocol":"postgres","port":5432,"account":"app","accessControl":"userPresence","custom":{"env":"prod"}},"secret":"cGFzcw=="}"#
        ),
        (0, "add-cert", #"{"itemClass":"cert","attributes":{"label":"root","subject":"MAA=","creationDate":1700000000.5},"secret":"MIIBAA=="}"#),
        (
            0, "add-key",
            #"{"itemClass":"keys","attributes":{"keyClass":"private","keyType":"ec","keySizeInBits":256,"applicationTag":"dGFn","synchronizable":true},"secret":"AAAA"}"#
        ),
        (0, "add-misspelt", #"{"itemClass":"genp","attributes":{"acount":"ada"},"secret":""}"#),
        // Not seeded: a duplicated "attributes" key, Fuzz/Regressions/request-decoding/duplicate-attributes-key.
        (
            1, "search",
            #"{"query":{"itemClass":"genp","attributes":{"service":"github.com"},"limit":"all","returnData":true,"returnAttributes":true},"passcode":"1234"}"#
        ),
        (
            1, "search-roots",
            #"{"keychain":"System Roots","query":{"itemClass":"cert","attributes":{"label":"ISRG Root X1","certificateType":3},"id":"roots:00","limit":"one","returnData":false,"returnAttributes":true}}"#
        ),
        (
            2, "update",
            #"{"query":{"itemClass":"inet","attributes":{"server":"a"},"limit":"all","returnData":false,"returnAttributes":false},"changes":{"comment":"rotated","type":1,"creator":4294967295},"secret":"bmV3"}"#
        ),
        (3, "delete", #"{"query":{"itemClass":"keys","attributes":{},"limit":"one","returnData":false,"returnAttributes":true}}"#),
        (4, "init", #"{"passcode":"correct horse"}"#),
        (4, "init-null", #"{"passcode":null}"#),
        (5, "unlock", #"{"passcode":"p\u00e9\ud83d\ude00","keychain":"work"}"#),
        (6, "lock", #"{}"#),
        (7, "passcode-change", #"{"current":null,"new":"n"}"#),
        (8, "passcode-remove", #"{"current":"c"}"#),
        (9, "hold", #"{"reason":"backup running"}"#),
        (
            10, "apps",
            #"{"applicationID":"TEAM1.backup","teamID":"TEAM1","executablePath":"/usr/bin/backup","accessGroups":["TEAM1.shared"],"passcode":"p"}"#
        ),
        (11, "keychains", #"{"name":"work","passcode":"p"}"#),
        (12, "keychains-delete", #"{"name":"work","passcode":"p"}"#),
        (13, "notes-create", #"{"title":"Groceries","body":"milk\neggs","folder":"Home","pinned":true}"#),
        (14, "notes-show", #"{"id":"0b6d3c1e-8f2a-4c43-9b51-2f6c1f0e3a77","passphrase":"pp"}"#),
        (15, "notes-edit", #"{"id":"x","title":"T","body":"b","pinned":false,"folder":"F","removeFromFolder":false,"passphrase":null}"#),
        (18, "notes-session", #"{"passphrase":"pp","note":"x"}"#),
        (20, "notes-change", #"{"current":"a","new":"b","hint":"h","removeHint":false}"#),
        (24, "secret", "class=inet&server=db.example.com&port=5432&account=app%20user&keychain=login"),
        (24, "secret-bad", "class=genp&service=a&service=b&acount=%zz"),
        (
            23, "notes-import",
            #"{"notes":[{"title":"Plain","folder":"F","created":700000000.5,"content":{"text":{"_0":"hello"}}},{"title":"Locked","content":{"appleLocked":{"_0":{"salt":"EWUQa2soi9oebssY5lx4dg==","iterations":20000,"wrappedKey":"mMDla0O1B+YMZWXsXhuwx0t1b31PSpv/","iv":"FR9k3nvjTRXazdqpszRx+Q==","tag":"gGvyu9O/g88SQLA+fE1qsQ==","ciphertext":"AAAA","hint":"h"}}}}]}"#
        ),
    ]
    var seeds: [String: Data] = [:]
    for (index, name, body) in bodies { seeds[name] = Data([UInt8(index)]) + Data(body.utf8) }
    return seeds
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(data)
    let route = routes[Int(input.byte()) % routes.count]
    let body = Data(input.rest)

    // Refused (an unknown attribute is `UnknownAttributeError`, answered errSecParam), as the daemon does.
    guard let attributes = try? route.decode(body) else { return }

    // Accepted: every attribute name JSONDecoder saw must be one the keychain knows.
    if !route.attributePaths.isEmpty, let tree = try? APICoding.decoder.decode(KeyTree.self, from: body) {
        for path in route.attributePaths {
            for key in tree.keys(at: path) ?? [] where !ItemAttributes.knownNames.contains(key) {
                fuzzFailure("\(route.name) accepted the unknown attribute \(key.debugDescription) at \(path)")
            }
        }
    }
    for attributes in attributes {
        _ = try? emptyRoots.copyMatching(ItemQuery(.certificate, attributes: attributes, limit: .all))
    }
}
