import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorSystem
import TresorTestSupport

/// `GET /v1/items/secret` through the real daemon, for a registered application (this test
/// runner): TresorKit's `secret` takes it for text and integer queries and gets the same answers
/// as through `POST /v1/items/search` — same access groups, same errors, user presence still
/// asking for the passcode — and a raw request sees exactly the documented route.
@Suite(.blocksItsThread, .serialized) struct SecretRouteTests {
    static let passcode = "e2e-secret-route-passcode"
    static let appID = "TEAMS.secret"

    @Test func lookupsWithoutJSONAnswerAsTheSearchDoes() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "s3cr3t-value", "bank-pin-5678", "cli-only-secret"]
        let keychain = try Self.startAsRegisteredApplication(harness)

        // Values that need percent-encoding, a second item that differs in the account alone.
        let service = "api.example.com/v2 & more = 100% +ünïcode"
        let item = ItemQuery.genericPassword(service: service, account: "ci bot")
        try keychain.add(item, secret: Data("s3cr3t-value".utf8))
        try keychain.add(.genericPassword(service: service, account: "other"), secret: Data("other".utf8))
        #expect(try keychain.secret(item) == Data("s3cr3t-value".utf8))
        #expect(try keychain.secret(.genericPassword(service: service, account: "other")) == Data("other".utf8))
        var web = ItemQuery(.internetPassword)
        (web.attributes.server, web.attributes.port, web.attributes.account) = ("example.com", 8443, "me")
        try keychain.add(web, secret: Data("web".utf8))
        #expect(try keychain.secret(web) == Data("web".utf8))
        web.attributes.port = 443
        #expect(throws: APIError.self) { try keychain.secret(web) }

        // The route itself, raw: the bytes of the secret, nothing around them.
        let path = try #require(ItemSecretQuery.path(for: item))
        let answer = try RawConnection.get(path, socket: harness.paths.socket.path)
        #expect(answer.status == 200)
        #expect(answer.contentType == "application/octet-stream")
        #expect(answer.body == Data("s3cr3t-value".utf8))
        let missing = try RawConnection.get(Route.itemSecret + "?class=genp&service=nothing", socket: harness.paths.socket.path)
        #expect(missing.status == 404 && missing.error?.code == .itemNotFound)
        let typo = try RawConnection.get(Route.itemSecret + "?class=genp&acount=ci%20bot", socket: harness.paths.socket.path)
        #expect(typo.status == 400 && typo.error?.code == .param)

        // Another application's item, the CLI's here, stays out of reach.
        #expect(
            try harness.tresor(["item", "add", "--service", "cli-svc", "--account", "me", "--secret-stdin"], input: "cli-only-secret\n").succeeded)
        #expect { try keychain.secret(.genericPassword(service: "cli-svc", account: "me")) } throws: { ($0 as? APIError)?.code == .itemNotFound }
        let other = try RawConnection.get(
            Route.itemSecret + "?class=genp&service=cli-svc&account=me&accessGroup=tresor", socket: harness.paths.socket.path)
        #expect(other.status != 200 && !other.body.contains(Data("cli-only-secret".utf8)))

        // User presence: refused without the passcode (that needs the JSON route), read with it.
        let bank = ItemQuery.genericPassword(service: "bank", account: "me")
        try keychain.add(bank, secret: Data("bank-pin-5678".utf8)) { $0.accessControl = .userPresence }
        #expect(throws: APIError.self) { try keychain.secret(bank) }
        let refused = try RawConnection.get(try #require(ItemSecretQuery.path(for: bank)), socket: harness.paths.socket.path)
        #expect(refused.status != 200 && !refused.body.contains(Data("bank-pin-5678".utf8)))
        #expect(try keychain.secret(bank, passcode: Self.passcode) == Data("bank-pin-5678".utf8))

        // A query the route cannot express goes through the search, with the same answer.
        var tagged = ItemQuery.genericPassword(service: "tagged", account: "me")
        try keychain.add(tagged, secret: Data("tagged".utf8)) { $0.generic = Data([1, 2, 3]) }
        tagged.attributes.generic = Data([1, 2, 3])
        #expect(ItemSecretQuery.path(for: tagged) == nil)
        #expect(try keychain.secret(tagged) == Data("tagged".utf8))

        // Locked: the same refusal as the search gives.
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect { try keychain.secret(item) } throws: { ($0 as? APIError)?.code == .interactionNotAllowed }
        try harness.expectNoSecretLeaked()
    }

    /// A connection's first request goes through the router, which identifies the peer; its
    /// later lookups are answered on the event loop (`InlineRoutes`). Both answer alike: every
    /// answer on one kept-alive connection equals that of a new connection — the secret, and each
    /// refusal (no such item, a malformed query, another application's item, user presence,
    /// a locked keybag).
    @Test func laterRequestsOnAConnectionAnswerAsItsFirst() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "kept-alive-secret", "presence-secret", "cli-kept-secret"]
        let keychain = try Self.startAsRegisteredApplication(harness)
        let item = ItemQuery.genericPassword(service: "kept", account: "alive")
        try keychain.add(item, secret: Data("kept-alive-secret".utf8))
        let presence = ItemQuery.genericPassword(service: "kept", account: "presence")
        try keychain.add(presence, secret: Data("presence-secret".utf8)) { $0.accessControl = .userPresence }
        #expect(
            try harness.tresor(["item", "add", "--service", "kept-cli", "--account", "me", "--secret-stdin"], input: "cli-kept-secret\n").succeeded)
        let socket = harness.paths.socket.path
        let paths = [
            try #require(ItemSecretQuery.path(for: item)),
            Route.itemSecret + "?class=genp&service=kept&account=nobody",
            Route.itemSecret + "?class=genp&service=kept&acount=alive",
            Route.itemSecret + "?class=genp&service=kept-cli&account=me&accessGroup=tresor",
            Route.itemSecret + "?class=genp&service=kept-cli&account=me",
            try #require(ItemSecretQuery.path(for: presence)),
            Route.itemSecret,
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
            for answer in kept.dropFirst(2) {
                #expect(answer.status != 200)
                #expect(!answer.body.contains(Data("presence-secret".utf8)) && !answer.body.contains(Data("cli-kept-secret".utf8)))
            }
        }
        try compare(expecting: 200)
        let unlocked = try RawConnection.get(paths, socket: socket)
        #expect(unlocked[0].body == Data("kept-alive-secret".utf8))
        #expect(unlocked[1].error?.code == .itemNotFound && unlocked[2].error?.code == .param)
        #expect(unlocked[5].status == 401 && unlocked[6].error?.code == .param)

        #expect(try harness.tresor(["lock"]).succeeded)
        try compare(expecting: 403)
        #expect(try RawConnection.get(paths, socket: socket)[0].error?.code == .interactionNotAllowed)
        try harness.expectNoSecretLeaked()
    }

    /// A connection's later finds (`POST /v1/items/search` without a passcode, when a blind
    /// index answers) are answered on its event loop too (`InlineRoutes`), and alike: every
    /// answer on one kept-alive connection equals that of a new connection — items found by
    /// label and by service, nothing found, another application's item, user presence, a query
    /// only a scan answers, an unknown attribute, a body that is not JSON, a locked keybag.
    @Test func laterSearchesOnAConnectionAnswerAsItsFirst() throws {
        let harness = try Harness()
        harness.secrets = [Self.passcode, "kept-find-secret", "presence-find-secret", "cli-find-secret"]
        let keychain = try Self.startAsRegisteredApplication(harness)
        try keychain.add(.genericPassword(service: "kept", account: "alive"), secret: Data("kept-find-secret".utf8)) { $0.label = "kept label" }
        try keychain.add(.genericPassword(service: "kept", account: "presence"), secret: Data("presence-find-secret".utf8)) {
            $0.label = "presence label"
            $0.accessControl = .userPresence
        }
        let cliAdd = ["item", "add", "--service", "kept-cli", "--account", "me", "--label", "cli label", "--secret-stdin"]
        #expect(try harness.tresor(cliAdd, input: "cli-find-secret\n").succeeded)
        func search(_ configure: (inout ItemQuery) -> Void) throws -> Data {
            var query = ItemQuery(.genericPassword)
            (query.limit, query.returnAttributes) = (.all, true)
            configure(&query)
            return try APICoding.encoder.encode(SearchItemsRequest(query: query))
        }
        let bodies = [
            try search { $0.attributes.label = "kept label" },
            try search { $0.attributes.service = "kept" },
            try search { $0.attributes.label = "nobody" },
            try search { $0.attributes.label = "cli label" },
            try search { ($0.attributes.label, $0.returnData) = ("presence label", true) },
            try search { _ in },
            Data(#"{"query":{"itemClass":"genp","attributes":{"lable":"kept label"}}}"#.utf8),
            Data("{".utf8),
        ]
        let requests = bodies.map { RawConnection.Request(method: "POST", path: Route.searchItems, body: $0) }
        let socket = harness.paths.socket.path

        func compare(expecting firstStatus: Int) throws {
            // The first request of the kept connection repeats: the router answers it, the event loop the second.
            let kept = try RawConnection.exchange([requests[0]] + requests, socket: socket)
            #expect(kept[0].status == firstStatus && kept[1].status == firstStatus)
            #expect(kept[0].body == kept[1].body)
            for (request, answer) in zip(requests, kept.dropFirst()) {
                let fresh = try #require(try RawConnection.exchange([request], socket: socket).first)
                let context = String(decoding: request.body, as: UTF8.self)
                #expect(answer.status == fresh.status, "\(context)")
                #expect(answer.contentType == fresh.contentType, "\(context)")
                #expect(answer.error?.code == fresh.error?.code, "\(context)")
                #expect(answer.body == fresh.body || answer.error?.message == fresh.error?.message, "\(context)")
            }
            for answer in kept {
                #expect(!answer.body.contains(Data("presence-find-secret".utf8)) && !answer.body.contains(Data("cli-find-secret".utf8)))
            }
        }
        try compare(expecting: 200)
        let unlocked = try RawConnection.exchange(requests, socket: socket)
        let found = try APICoding.decoder.decode(ItemsResponse.self, from: unlocked[0].body).items
        #expect(found.map { $0.attributes?.account } == ["alive"])
        let byService = try APICoding.decoder.decode(ItemsResponse.self, from: unlocked[1].body).items
        #expect(Set(byService.compactMap { $0.attributes?.account }) == ["alive", "presence"])
        #expect(unlocked[2].error?.code == .itemNotFound && unlocked[3].error?.code == .itemNotFound)
        #expect(unlocked[4].status == 401)
        #expect(unlocked[5].status == 200 && unlocked[6].error?.code == .param && unlocked[7].error?.code == .param)

        #expect(try harness.tresor(["lock"]).succeeded)
        try compare(expecting: 403)
        #expect(try RawConnection.exchange(requests, socket: socket)[0].error?.code == .interactionNotAllowed)
        try harness.expectNoSecretLeaked()
    }

    /// Starts the daemon, initialises the keybag and registers this test runner as `appID`: a
    /// TresorKit keychain of that application.
    static func startAsRegisteredApplication(_ harness: Harness) throws -> Keychain {
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let runner = ProcessImage.ownExecutablePath ?? CommandLine.arguments[0]
        let registered = try harness.tresor(
            ["app", "register", "--id", appID, "--team", "TEAMS", "--exe", runner, "--passcode-stdin"], input: passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
        return Keychain(client: try TresorKitClient.connect(harness))
    }
}
