import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `GET /v1/items/attributes` through the real daemon, for a registered application (this test
/// runner): TresorKit's `attributes` takes it for text and integer queries and gets the same
/// attributes as through `POST /v1/items/search` — same access groups, same errors — and a raw
/// request sees the documented bytes (`ItemAttributesList`).
@Suite(.blocksItsThread, .serialized) struct AttributesRouteTests {
    static let passcode = SecretRouteTests.passcode

    /// The attributes JSON's search finds for `query`: what the route must answer.
    static func searched(_ keychain: Keychain, _ query: ItemQuery) throws -> [ItemAttributes] {
        var query = query
        (query.limit, query.returnData, query.returnAttributes) = (.all, false, true)
        return try keychain.items(query).compactMap(\.attributes)
    }

    @Test func findsWithoutJSONAnswerAsTheSearchDoes() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "find-secret-one", "find-secret-two", "cli-find-only", "presence-find-pin"]
        let keychain = try SecretRouteTests.startAsRegisteredApplication(harness)

        // A label that needs percent-encoding, on two items; every kind of attribute set on one.
        let label = "Deploy token & more = 100% +ünïcode"
        try keychain.add(.genericPassword(service: "api.example.com", account: "ci"), secret: Data("find-secret-one".utf8)) {
            ($0.label, $0.comment, $0.generic, $0.creator, $0.readableByScripts) = (label, "a comment", Data([0, 1, 2]), 0x6170_706C, true)
        }
        try keychain.add(.genericPassword(service: "api.example.com", account: "cd"), secret: Data("find-secret-two".utf8)) {
            $0.label = label
        }
        var byLabel = ItemQuery(.genericPassword)
        byLabel.attributes.label = label
        let found = try keychain.attributes(byLabel)
        #expect(found == (try Self.searched(keychain, byLabel)))
        #expect(Set(found.compactMap(\.account)) == ["ci", "cd"])
        let ci = try #require(found.first { $0.account == "ci" })
        #expect(ci.generic == Data([0, 1, 2]) && ci.creator == 0x6170_706C && ci.readableByScripts == true && ci.comment == "a comment")
        #expect(ci.creationDate != nil && ci.accessGroup == SecretRouteTests.appID)
        var byService = ItemQuery(.genericPassword)
        (byService.attributes.service, byService.attributes.account) = ("api.example.com", "cd")
        #expect(try keychain.attributes(byService) == (try Self.searched(keychain, byService)))

        // The route itself, raw: the documented bytes, no secret among them.
        let path = try #require(ItemSecretQuery.attributesPath(for: byLabel))
        let answer = try RawConnection.get(path, socket: harness.paths.socket.path)
        #expect(answer.status == 200 && answer.contentType == ItemAttributesList.contentType)
        #expect(Set(try ItemAttributesList.decode(answer.body).compactMap(\.account)) == ["ci", "cd"])
        #expect(!answer.body.contains(Data("find-secret-one".utf8)))
        let missing = try RawConnection.get(Route.itemAttributes + "?class=genp&label=nobody", socket: harness.paths.socket.path)
        #expect(missing.status == 404 && missing.error?.code == .itemNotFound)
        #expect { try keychain.attributes(.genericPassword(service: "nobody", account: "nobody")) } throws: {
            ($0 as? APIError)?.code == .itemNotFound
        }
        let typo = try RawConnection.get(Route.itemAttributes + "?class=genp&lable=x", socket: harness.paths.socket.path)
        #expect(typo.status == 400 && typo.error?.code == .param)
        let unique = try RawConnection.get(path + "&unique=1", socket: harness.paths.socket.path)
        #expect(unique.status == 400 && unique.error?.code == .param)

        // Another application's item stays out of reach.
        let cliAdd = ["item", "add", "--service", "cli-svc", "--account", "me", "--label", "cli label", "--secret-stdin"]
        #expect(try harness.tresor(cliAdd, input: "cli-find-only\n").succeeded)
        var cli = ItemQuery(.genericPassword)
        cli.attributes.label = "cli label"
        #expect { try keychain.attributes(cli) } throws: { ($0 as? APIError)?.code == .itemNotFound }

        // A `userPresence` item's attributes answer as the search answers them, never its secret.
        try keychain.add(.genericPassword(service: "bank", account: "me"), secret: Data("presence-find-pin".utf8)) {
            ($0.label, $0.accessControl) = ("bank label", .userPresence)
        }
        var bank = ItemQuery(.genericPassword)
        bank.attributes.label = "bank label"
        #expect(try keychain.attributes(bank) == (try Self.searched(keychain, bank)))

        // A query the route cannot express goes through the search, with the same answer.
        var tagged = ItemQuery(.genericPassword)
        tagged.attributes.generic = Data([0, 1, 2])
        #expect(ItemSecretQuery.attributesPath(for: tagged) == nil)
        #expect(try keychain.attributes(tagged).map(\.account) == ["ci"])

        // Locked: the same refusal as the search gives.
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect { try keychain.attributes(byLabel) } throws: { ($0 as? APIError)?.code == .interactionNotAllowed }
        try harness.expectNoSecretLeaked()
    }

    /// A connection's first request goes through the router, which identifies the peer; its later
    /// finds are answered on the event loop (`InlineRoutes`). Both answer alike: every answer on
    /// one kept-alive connection equals that of a new connection — found by label, nothing found,
    /// another application's item, a malformed query, `unique`, a locked keybag.
    @Test func laterFindsOnAConnectionAnswerAsItsFirst() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "kept-attributes-secret", "cli-attributes-secret"]
        let keychain = try SecretRouteTests.startAsRegisteredApplication(harness)
        try keychain.add(.genericPassword(service: "kept", account: "alive"), secret: Data("kept-attributes-secret".utf8)) {
            $0.label = "kept label"
        }
        let cliAdd = ["item", "add", "--service", "kept-cli", "--account", "me", "--label", "cli label", "--secret-stdin"]
        #expect(try harness.tresor(cliAdd, input: "cli-attributes-secret\n").succeeded)
        let socket = harness.paths.socket.path
        let paths = [
            Route.itemAttributes + "?class=genp&label=kept%20label",
            Route.itemAttributes + "?class=genp&label=nobody",
            Route.itemAttributes + "?class=genp&label=cli%20label",
            Route.itemAttributes + "?class=genp&lable=kept%20label",
            Route.itemAttributes + "?class=genp&label=kept%20label&unique=1",
            Route.itemAttributes,
        ]

        func compare(expecting firstStatus: Int) throws {
            // The first request of the kept connection repeats: the router answers it, the event loop the second.
            let kept = try RawConnection.get([paths[0]] + paths, socket: socket)
            #expect(kept[0].status == firstStatus && kept[1].status == firstStatus)
            #expect(kept[0].body == kept[1].body)
            for (path, answer) in zip(paths, kept.dropFirst()) {
                let fresh = try RawConnection.get(path, socket: socket)
                #expect(answer.status == fresh.status, "\(path)")
                #expect(answer.contentType == fresh.contentType, "\(path)")
                #expect(answer.error?.code == fresh.error?.code, "\(path)")
                #expect(answer.body == fresh.body || answer.error?.message == fresh.error?.message, "\(path)")
            }
            for answer in kept {
                #expect(!answer.body.contains(Data("kept-attributes-secret".utf8)) && !answer.body.contains(Data("cli-attributes-secret".utf8)))
            }
        }
        try compare(expecting: 200)
        let unlocked = try RawConnection.get(paths, socket: socket)
        #expect(try ItemAttributesList.decode(unlocked[0].body).map(\.account) == ["alive"])
        #expect(unlocked[1].error?.code == .itemNotFound && unlocked[2].error?.code == .itemNotFound)
        #expect(unlocked[3].error?.code == .param && unlocked[4].error?.code == .param && unlocked[5].error?.code == .param)

        #expect(try harness.tresor(["lock"]).succeeded)
        try compare(expecting: 403)
        #expect(try RawConnection.get(paths, socket: socket)[0].error?.code == .interactionNotAllowed)
        try harness.expectNoSecretLeaked()
    }
}
