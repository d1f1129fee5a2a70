import Foundation
import Testing
import TresorCrypto
import TresorDBus
import TresorKeychain

@testable import TresorSecretService

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The provider's parts that need no bus: paths, sessions, the in-memory collection, errors.
@Suite struct SecretServiceUnitTests {
    @Test func pathsNameTheirObjects() {
        #expect(SecretObjectPath("/org/freedesktop/secrets") == .service)
        #expect(SecretObjectPath("/org/freedesktop/secrets/collection/login") == .collection("login"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/aliases/default") == .collection("login"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/aliases/default/42") == .item(collection: "login", id: "42"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/collection/session/7") == .item(collection: "session", id: "7"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/session/3") == .session("3"))
        #expect(SecretObjectPath("/org/freedesktop/secrets/prompt/1") == .prompt("1"))
        for unknown in [
            "/", "/org/freedesktop/secretsX", "/org/freedesktop/secrets/aliases/work", "/org/freedesktop/secrets/collection/a/b/c",
            "/org/freedesktop/secrets/nothing/1",
        ] {
            #expect(SecretObjectPath(unknown) == nil, "\(unknown)")
        }
        #expect(SecretObjectPath.item(collection: "login", id: "42").path == "/org/freedesktop/secrets/collection/login/42")
    }

    @Test func aSessionBelongsToTheConnectionThatOpenedIt() throws {
        let sessions = TransferSessions()
        let opened = try sessions.open(algorithm: "plain", input: .variant(.string("")), owner: ":1.5")
        #expect(opened.output == .variant(.string("")))
        #expect(throws: DBusError.self) { try sessions.session(opened.path, for: ":1.6") }
        let secret = SecretValue(bytes: Array("hunter2".utf8), contentType: "text/plain")
        #expect(throws: DBusError.self) { try sessions.encode(secret, sessionPath: opened.path, for: ":1.6") }
        let sent = try sessions.encode(secret, sessionPath: opened.path, for: ":1.5")
        #expect(try sessions.decode(sent, for: ":1.5").bytes == secret.bytes)
        #expect(throws: DBusError.self) { try sessions.decode(sent, for: ":1.6") }
        sessions.closeAll(of: ":1.5")
        #expect(throws: DBusError.self) { try sessions.session(opened.path, for: ":1.5") }
    }

    @Test func aFloodOfSessionsIsRefusedPastTheLimit() throws {
        let sessions = TransferSessions()
        for _ in 0..<TransferSessions.perConnection {
            _ = try sessions.open(algorithm: "plain", input: .variant(.string("")), owner: ":1.9")
        }
        #expect(throws: DBusError.limitsExceeded("at most \(TransferSessions.perConnection) open sessions per connection")) {
            try sessions.open(algorithm: "plain", input: .variant(.string("")), owner: ":1.9")
        }
        // Another connection is not held back by the first one's flood.
        _ = try sessions.open(algorithm: "plain", input: .variant(.string("")), owner: ":1.10")
    }

    /// Every DH session agrees a key of its own: six sessions opened back to back answer with six
    /// different public keys, and each session's key opens what the client sealed with the key
    /// it agreed.
    @Test func everyDHSessionGetsAKeyPairOfItsOwn() throws {
        let sessions = TransferSessions()
        var publicKeys: Set<[UInt8]> = []
        for _ in 0..<6 {
            let client = DiffieHellman.KeyPair()
            let opened = try sessions.open(algorithm: SessionEncryption.algorithm, input: .variant(.bytes(Array(client.publicKey))), owner: ":1.3")
            guard case .variant(.bytes(let serverKey)) = opened.output else { Issue.record("no public key in \(opened.output)"); return }
            publicKeys.insert(serverKey)
            let key = try KeyDerivation.secretServiceSessionKey(sharedSecret: client.sharedSecret(peerPublicKey: Data(serverKey)))
            let sealed = try AESCBC.encrypt(Array("hunter2".utf8), using: key)
            let sent = DBusValue.structure([
                .objectPath(opened.path), .bytes(Array(sealed.iv)), .bytes(Array(sealed.ciphertext)), .string("text/plain"),
            ])
            #expect(try sessions.decode(sent, for: ":1.3").bytes == Array("hunter2".utf8))
        }
        #expect(publicKeys.count == 6)
    }

    @Test func unknownAlgorithmsAreNotSupported() {
        let sessions = TransferSessions()
        #expect {
            try sessions.open(algorithm: "dh-ietf2048-made-up", input: .variant(.string("")), owner: ":1.1")
        } throws: { ($0 as? DBusError)?.name == "org.freedesktop.DBus.Error.NotSupported" }
    }

    @Test func theSessionCollectionKeepsEachExecutablesItemsToItself() throws {
        let collection = MemoryCollection()
        let alpha = SecretServiceClient(
            caller: Caller(accessGroups: ["exe:/usr/bin/alpha"], defaultAccessGroup: "exe:/usr/bin/alpha"), executable: "/usr/bin/alpha")
        let beta = SecretServiceClient(
            caller: Caller(accessGroups: ["exe:/usr/bin/beta"], defaultAccessGroup: "exe:/usr/bin/beta"), executable: "/usr/bin/beta")
        let secret = SecretValue(bytes: Array("s3cret".utf8), contentType: "text/plain")
        let created = try collection.create(label: "a", attributes: ["service": "x"], secret: secret, client: alpha)
        #expect(try collection.search(["service": "x"], client: alpha).unlocked.map(\.id) == [created])
        #expect(try collection.search(["service": "x"], client: beta).unlocked.isEmpty)
        #expect(try collection.search([:], client: beta).unlocked.isEmpty)
        #expect(throws: KeychainError.itemNotFound) { try collection.secret(created, client: beta) }
        #expect(throws: KeychainError.itemNotFound) { try collection.delete(created, client: beta) }
        #expect(throws: KeychainError.itemNotFound) { try collection.update(created, label: "mine now", attributes: nil, client: beta) }
        // Replacing matches the caller's own items only: beta gets an item of its own.
        let betas = try collection.store(label: "b", attributes: ["service": "x"], secret: secret, replace: true, client: beta)
        guard case .created(let betasID) = betas else { Issue.record("\(betas)"); return }
        #expect(betasID != created)
        let replaced = try collection.store(
            label: "a2", attributes: ["service": "x"], secret: SecretValue(bytes: [1], contentType: "x"), replace: true, client: alpha)
        #expect(replaced == .replaced(created))
        #expect(try collection.secret(created, client: alpha).bytes == [1])
    }

    /// Items added beside one with the same attributes come after it: a lookup reads the first a
    /// search lists, and a replacement changes that one.
    @Test func theSessionCollectionListsTheOldestFirstAndReplacesIt() throws {
        let collection = MemoryCollection()
        let caller = SecretServiceClient(caller: Caller(accessGroups: ["g"], defaultAccessGroup: "g"), executable: "/g")
        let secret = SecretValue(bytes: [1], contentType: "text/plain")
        var made: [String] = []
        for _ in 0..<8 {
            made.append(try collection.store(label: "", attributes: ["service": "x"], secret: secret, replace: false, client: caller).id)
            usleep(1_000)
        }
        #expect(try collection.search(["service": "x"], client: caller).unlocked.map(\.id) == made)
        #expect(try collection.existing(matching: ["service": "x"], client: caller) == made[0])
    }

    @Test func oversizedLabelsAndAttributeMapsAreRefused() throws {
        let collection = MemoryCollection()
        let caller = SecretServiceClient(caller: Caller(accessGroups: ["g"], defaultAccessGroup: "g"), executable: "/g")
        let secret = SecretValue(bytes: [1], contentType: "text/plain")
        #expect(throws: KeychainError.self) {
            try collection.store(label: String(repeating: "l", count: 1 << 20), attributes: [:], secret: secret, replace: false, client: caller)
        }
        let huge = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ("k\($0)", "v") })
        #expect(throws: KeychainError.self) { try collection.store(label: "", attributes: huge, secret: secret, replace: false, client: caller) }
        #expect(try collection.search([:], client: caller).unlocked.isEmpty)
    }

    /// 2,000 items of the largest secret would be 500 MiB of the daemon's memory: the collection
    /// stops at its byte budget, and frees room as items go.
    @Test func theSessionCollectionStopsAtItsByteBudget() throws {
        let collection = MemoryCollection()
        let caller = SecretServiceClient(caller: Caller(accessGroups: ["g"], defaultAccessGroup: "g"), executable: "/g")
        let large = SecretValue(bytes: Array(repeating: 7, count: KeychainStore.maximumSecretBytes), contentType: "text/plain")
        var created: [String] = []
        var refused: (any Error)?
        for index in 0..<2_000 {
            do {
                created.append(try collection.store(label: "\(index)", attributes: [:], secret: large, replace: false, client: caller).id)
            } catch {
                refused = error
                break
            }
        }
        #expect(created.count == MemoryCollection.byteBudget / KeychainStore.maximumSecretBytes - 1, "stopped at the budget, not the item count")
        #expect((refused as? DBusError)?.name == "org.freedesktop.DBus.Error.LimitsExceeded")
        // A secret grown past the budget is refused too, and the item keeps its old one.
        let small = try collection.store(
            label: "small", attributes: [:], secret: SecretValue(bytes: [1], contentType: "text/plain"), replace: false, client: caller)
        #expect(throws: DBusError.self) { try collection.setSecret(small.id, large, client: caller) }
        #expect(try collection.secret(small.id, client: caller).bytes == [1])
        try collection.delete(created[0], client: caller)
        #expect(throws: Never.self) { try collection.store(label: "again", attributes: [:], secret: large, replace: false, client: caller) }
    }

    /// Small items stop at the item count, well inside the byte budget; a replace of one is no
    /// new item, and a deleted one makes room.
    @Test func theSessionCollectionStopsAtItsItemCount() throws {
        let collection = MemoryCollection()
        let caller = SecretServiceClient(caller: Caller(accessGroups: ["g"], defaultAccessGroup: "g"), executable: "/g")
        let secret = SecretValue(bytes: [1], contentType: "text/plain")
        var first: String?
        for index in 0..<MemoryCollection.capacity {
            let id = try collection.store(label: "", attributes: ["n": "\(index)"], secret: secret, replace: false, client: caller).id
            first = first ?? id
        }
        do {
            _ = try collection.store(label: "", attributes: ["n": "over"], secret: secret, replace: false, client: caller)
            Issue.record("an item past the count was created")
        } catch {
            #expect(SecretServiceProvider.wireError(error).name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
        }
        #expect(try collection.search(["n": "over"], client: caller).unlocked.isEmpty, "the refused item was kept")
        #expect(throws: Never.self) { try collection.store(label: "", attributes: ["n": "0"], secret: secret, replace: true, client: caller) }
        try collection.delete(try #require(first), client: caller)
        #expect(throws: Never.self) { try collection.store(label: "", attributes: ["n": "again"], secret: secret, replace: false, client: caller) }
    }

    @Test func keychainErrorsBecomeTheSecretServicesOwn() {
        #expect(SecretServiceProvider.wireError(KeychainError.itemNotFound).name == "org.freedesktop.Secret.Error.NoSuchObject")
        #expect(SecretServiceProvider.wireError(KeychainError.interactionNotAllowed("x")).name == "org.freedesktop.Secret.Error.IsLocked")
        #expect(SecretServiceProvider.wireError(KeychainError.param("x")).name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(SecretServiceProvider.wireError(KeychainError.missingEntitlement("x")).name == "org.freedesktop.DBus.Error.AccessDenied")
    }

    @Test func introspectionIsWellFormedXMLForEveryObject() throws {
        for path in [
            "/", "/org", "/org/freedesktop", "/org/freedesktop/secrets", "/org/freedesktop/secrets/collection/login",
            "/org/freedesktop/secrets/collection/login/5", "/org/freedesktop/secrets/session/1", "/org/freedesktop/secrets/prompt/1",
        ] {
            let xml = try Introspection.xml(for: path)
            let parser = XMLParser(data: Data(xml.utf8))
            parser.shouldResolveExternalEntities = false
            #expect(parser.parse(), "\(path): \(parser.parserError.map { "\($0)" } ?? "")")
        }
        #expect(throws: DBusError.self) { try Introspection.xml(for: "/elsewhere") }
    }
}

/// A generic client the user does not trust now (docs/SECURITY.md, "Generic clients") changes one
/// of its items only with the user's approval: the store waits, and the prompt makes the change
/// only when the user allows it.
@Suite struct GenericClientChangeTests {
    let collection = MemoryCollection()
    let secret = SecretValue(bytes: Array("s3cret".utf8), contentType: "text/plain")

    func secretTool(needsApproval: Bool, approved: Set<String> = []) -> SecretServiceClient {
        var client = SecretServiceClient(
            caller: Caller(accessGroups: ["exe:/usr/bin/secret-tool"], defaultAccessGroup: "exe:/usr/bin/secret-tool"),
            executable: "/usr/bin/secret-tool", isGenericClient: true)
        client.needsApproval = needsApproval
        client.approvedItems = approved
        return client
    }

    @Test func aReplacingStoreWaitsForTheUserAndChangesNothing() throws {
        let id = try collection.store(
            label: "a", attributes: ["service": "x"], secret: secret, replace: true, client: secretTool(needsApproval: false)
        ).id
        let other = SecretValue(bytes: Array("planted".utf8), contentType: "text/plain")
        let asked = try collection.store(
            label: "b", attributes: ["service": "x"], secret: other, replace: true, client: secretTool(needsApproval: true))
        #expect(asked == .waitsForApproval(id))
        #expect(try collection.secret(id, client: secretTool(needsApproval: false)).bytes == secret.bytes, "the secret was replaced without the user")
        #expect(try collection.item(id, client: secretTool(needsApproval: false)).label == "a")
        // A new item is no change to anything: stored without asking.
        #expect(
            try collection.store(label: "c", attributes: ["service": "y"], secret: other, replace: true, client: secretTool(needsApproval: true))
                != .waitsForApproval(id))
        // Approved for this item, the store replaces it.
        let allowed = try collection.store(
            label: "b", attributes: ["service": "x"], secret: other, replace: true, client: secretTool(needsApproval: true, approved: [id]))
        #expect(allowed == .replaced(id))
        #expect(try collection.secret(id, client: secretTool(needsApproval: false)).bytes == other.bytes)
    }

    /// Refused while the keybag is unlocked, the client is told what the user can do about it.
    @Test func aRefusalSaysHowToAllowOrTrustTheProgram() throws {
        let id = try collection.store(label: "a", attributes: [:], secret: secret, replace: false, client: secretTool(needsApproval: false)).id
        #expect {
            try collection.secret(id, client: secretTool(needsApproval: true))
        } throws: { error in
            let refusal = SecretServiceProvider.wireError(error)
            return refusal.name == "org.freedesktop.Secret.Error.IsLocked" && refusal.message.contains("`tresor approve`")
                && refusal.message.contains("`tresor secret-service trust add /usr/bin/secret-tool`")
        }
    }

    @Test func aChangePromptMakesTheChangeOnlyWhenAllowedAndAnswersWithTheItem() throws {
        let prompts = Prompts()
        let change = PendingChange(
            kind: .replace(label: "b", secret: secret), collection: CollectionName.session, id: "7", client: secretTool(needsApproval: true))
        let refused = try prompts.presence(["/item/7"], ids: ["7"], description: "item", change: change, for: ":1.5")
        let allowed = try prompts.presence(["/item/7"], ids: ["7"], description: "item", change: change, for: ":1.6")
        #expect(try prompts.start(refused, caller: ":1.5")?.access == .replace, "the user is told it is a replacement")
        _ = try prompts.start(allowed, caller: ":1.6")
        prompts.answer(refused, allowed: false)
        prompts.answer(allowed, allowed: true)
        var carried: [String] = []
        var readsApproved = 0
        let signals = prompts.due(
            unlocked: true, approved: { _, _ in readsApproved += 1 },
            carryOut: { owner, change in
                carried.append(owner)
                return .objectPath("/item/\(change.id)")
            })
        #expect(carried == [":1.6"], "only the allowed change is made")
        #expect(readsApproved == 0, "a change approves no read")
        let completed = Dictionary(uniqueKeysWithValues: signals.map { ($0.destination ?? "", $0.arguments) })
        #expect(completed[":1.5"]?.first?.boolValue == true, "refused: dismissed")
        #expect(
            completed[":1.5"]?.last?.unwrapped.signature == "o",
            "a dismissed CreateItem prompt's result is still an object path: libsecret hangs on another")
        #expect(completed[":1.6"]?.first?.boolValue == false)
        #expect(completed[":1.6"]?.last?.unwrapped.stringValue == "/item/7", "the replaced item is the prompt's result, as CreateItem's")
        #expect(prompts.isEmpty)
    }

    /// An unlock prompt nobody could be asked about ends `unlockWait` after its `Prompt` call:
    /// with a `Completed` that says dismissed when its client was not told otherwise, with none
    /// when the client's call was answered with the reason instead.
    @Test func anUnlockNobodyCouldBeAskedAboutEndsAfterItsWaitToldOnce() throws {
        let prompts = Prompts()
        let told = try prompts.unlock(["/c/login"], for: ":1.7"), dismissed = try prompts.unlock(["/c/login"], for: ":1.8")
        for path in [told, dismissed] {
            _ = try prompts.start(path, caller: path == told ? ":1.7" : ":1.8")
            prompts.nobodyAsked(path, UnaskedPrompt(executable: "/usr/bin/secret-tool", need: .unlock, reason: UnaskedPrompt.noPrompterToUnlock))
        }
        var ended: [String] = []
        let early = prompts.due(
            unlocked: false, now: Date().addingTimeInterval(Prompts.unlockWait - 1),
            unasked: { path, _ in
                ended.append(path)
                return true
            })
        #expect(early.isEmpty && ended.isEmpty, "still waiting for `tresor unlock`")
        let signals = prompts.due(
            unlocked: false, now: Date().addingTimeInterval(Prompts.unlockWait + 1),
            unasked: { path, unasked in
                ended.append(path)
                #expect(unasked.refusal.name == "org.freedesktop.Secret.Error.IsLocked" && unasked.refusal.message.contains("`tresor unlock`"))
                return path == told
            })
        #expect(Set(ended) == [told, dismissed])
        #expect(signals.map(\.destination) == [":1.8"], "no Completed for the client told by its call's error")
        #expect(signals.first?.arguments.first?.boolValue == true, "dismissed")
        #expect(prompts.isEmpty)
    }
}

/// A generic client waiting on the locked keybag: the desktop's question to unlock allows its
/// read too, and names it by what the client searched for.
@Suite struct ReadAllowedByUnlockTests {
    @Test func theReadIsNamedByTheAttributesItsItemsWereFoundBy() {
        let found = ClientSearch(attributes: ["user": "alice", "service": "github.com"], locked: ["/i/1", "/i/2"])
        #expect(SecretServiceProvider.described(read: ["/i/1"], foundBy: found) == "1 secret with service=github.com, user=alice")
        #expect(SecretServiceProvider.described(read: ["/i/1", "/i/2"], foundBy: found) == "2 secrets with service=github.com, user=alice")
        // An item the search did not find, a search by nothing, no search: its number only.
        #expect(SecretServiceProvider.described(read: ["/i/1", "/i/3"], foundBy: found) == "2 secrets of its own")
        #expect(SecretServiceProvider.described(read: ["/i/1"], foundBy: ClientSearch(attributes: [:], locked: ["/i/1"])) == "1 secret of its own")
        #expect(SecretServiceProvider.described(read: ["/i/1"], foundBy: nil) == "1 secret of its own")
    }

    /// The keybag unlocked another way (`tresor unlock`) while the desktop's question also asks
    /// about the read: the prompt waits for the question's answer, or it would complete with the
    /// read not allowed and the user be asked a second time.
    @Test func anUnlockPromptWhoseQuestionAllowsTheReadWaitsForItsAnswer() throws {
        let prompts = Prompts()
        let reading = try prompts.unlock(["/c/login/1"], for: ":1.5"), unlocking = try prompts.unlock(["/c/login/2"], for: ":1.6")
        _ = try prompts.start(reading, caller: ":1.5")
        _ = try prompts.start(unlocking, caller: ":1.6")
        prompts.askingToUnlock(reading, allowingTheRead: true)
        prompts.askingToUnlock(unlocking)
        #expect(prompts.unlockedNow().map(\.path) == [unlocking])
        #expect(prompts.due(unlocked: true).map(\.destination) == [":1.6"], "the plain unlock completes with the keybag")
        prompts.unlockAnswer(reading, refused: false)
        #expect(prompts.unlockedNow().map(\.path) == [reading])
        let completed = prompts.due(unlocked: true)
        #expect(completed.map(\.destination) == [":1.5"] && completed.first?.arguments.first?.boolValue == false)
    }
}
