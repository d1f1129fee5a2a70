import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorNotes
import TresorTestSupport

/// Locked notes through the web API, with the test playing the browser's part using the
/// server-side Swift crypto (`LockedNoteCrypto`, the same format the web client's WebCrypto
/// code writes): the server receives salts, verifiers, wrapped keys, ciphertext and proofs
/// (HKDF subkeys that show the browser holds a key) only, never a passphrase or a key. And across clients: a note locked through the web opens with
/// `tresor note show`, and one locked by the CLI opens in the "browser".
@Suite(.blocksItsThread, .serialized) struct WebLockedNotesTests {
    static let passcode = "e2e-web-locked-passcode"

    /// What the browser makes for a new passphrase.
    struct Material {
        var key: SymmetricKey
        var json: [String: Any]

        init(_ passphrase: String, iterations: Int, hint: String? = nil) throws {
            let salt = SecureRandom.bytes(count: 16)
            key = try LockedNoteCrypto.passphraseKey(try Passphrase(passphrase), salt: salt, iterations: iterations)
            let verifier = try LockedNoteCrypto.wrap(LockedNoteCrypto.newNoteKey(), with: key)
            json = [
                "salt": salt.base64EncodedString(), "iterations": iterations, "verifier": verifier.base64EncodedString(),
                "proofHash": LockedNoteCrypto.proofHash(LockedNoteCrypto.passphraseProof(key)).base64EncodedString(),
            ]
            if let hint { json["hint"] = hint }
        }

        /// `{passphraseID, proof}` for passphrase `id`.
        func proof(_ id: Int) -> [String: Any] {
            ["passphraseID": id, "proof": LockedNoteCrypto.passphraseProof(key).base64EncodedString()]
        }
    }

    /// A lock request for `body` and the note's attachments (id → plaintext).
    func lockRequest(passphraseID: Int, noteKey: SymmetricKey, passphraseKey: SymmetricKey, body: String, attachments: [String: Data]) throws
        -> [String: Any]
    {
        let sealed = try LockedNoteCrypto.sealBody(Data(body.utf8), with: noteKey)
        let chunkSize = 1024 * 1024
        let sealedAttachments = try attachments.map { id, data -> [String: Any] in
            let count = max(1, (data.count + chunkSize - 1) / chunkSize)
            let chunks = try (0..<count).map { index in
                try LockedNoteCrypto.sealChunk(
                    data[(index * chunkSize)..<min(data.count, (index + 1) * chunkSize)], with: noteKey, attachmentID: id,
                    index: UInt64(index), isFinal: index == count - 1
                ).base64EncodedString()
            }
            return ["id": id, "chunks": chunks]
        }
        return [
            "passphraseProof": ["passphraseID": passphraseID, "proof": LockedNoteCrypto.passphraseProof(passphraseKey).base64EncodedString()],
            "noteProofHash": LockedNoteCrypto.proofHash(LockedNoteCrypto.noteProof(noteKey)).base64EncodedString(),
            "wrappedKey": try LockedNoteCrypto.wrap(noteKey, with: passphraseKey).base64EncodedString(),
            "iv": sealed.iv.base64EncodedString(), "tag": sealed.tag.base64EncodedString(),
            "ciphertext": sealed.ciphertext.base64EncodedString(), "attachments": sealedAttachments,
        ]
    }

    /// Opens note `id` as the browser does: its `locked` record, and its wrapped key for a proof.
    func open(_ browser: WebBrowser, _ id: String, with passphraseKey: SymmetricKey) throws -> (noteKey: SymmetricKey, body: String) {
        let record = try #require(try browser.get("/api/notes/\(id)").json?["locked"] as? [String: Any])
        #expect(record["wrappedKey"] == nil, "served without a proof")
        #expect(record["bodyFormat"] as? String == "text", "a body sealed in the browser is text, spelled as docs/WEB.md, \"Shapes\" has it")
        func bytes(_ name: String, in record: [String: Any]) throws -> Data {
            let text = try #require(record[name] as? String)
            return try #require(Data(base64Encoded: text))
        }
        func bytes(_ name: String) throws -> Data { try bytes(name, in: record) }
        let passphraseID = try #require(record["passphraseID"] as? Int)
        let answer = try browser.post(
            "/api/notes/\(id)/wrapped-key",
            [
                "passphraseID": passphraseID, "proof": LockedNoteCrypto.passphraseProof(passphraseKey).base64EncodedString(),
            ])
        #expect(answer.status == 200, "wrapped-key: \(answer.text)")
        let wrapped = try bytes("wrappedKey", in: try #require(answer.json))
        let noteKey = try #require(LockedNoteCrypto.unwrap(wrapped, with: passphraseKey), "the passphrase key unwraps the note key")
        let body = try LockedNoteCrypto.openBody(
            AESGCM.Sealed(iv: try bytes("iv"), ciphertext: try bytes("ciphertext"), tag: try bytes("tag")), with: noteKey)
        return (noteKey, String(decoding: body, as: UTF8.self))
    }

    func state(_ browser: WebBrowser) throws -> [String: Any] { try #require(try browser.get("/api/passphrase").json) }

    @Test func lockOpenEditChangeAndResetWithBrowserCrypto() throws {
        let harness = try Harness(productionKeyDerivation: true)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let accountPassword = "e2e-alice-password-\(UUID().uuidString.prefix(8))"
        let first = "e2e-first-passphrase-\(UUID().uuidString.prefix(8))", second = "e2e-second-passphrase-\(UUID().uuidString.prefix(8))"
        let third = "e2e-third-passphrase-\(UUID().uuidString.prefix(8))"
        harness.secrets += [accountPassword, first, second, third]
        var alice = WebBrowser(server)
        #expect(try alice.register("alice", accountPassword).status == 201)
        harness.secrets.append(alice.token ?? "")

        var initial = try state(alice)
        #expect(initial["isSet"] as? Bool == false)
        let iterations = try #require(initial["minimumIterations"] as? Int)
        #expect(iterations >= 600_000)

        // Too few iterations, or a passphrase in the body: refused, nothing set.
        #expect(try alice.post("/api/passphrase", try Material(first, iterations: 1000).json).status == 400)
        var withSecret = try Material(first, iterations: iterations).json
        withSecret["passphrase"] = first
        #expect(try alice.post("/api/passphrase", withSecret).status == 400)
        #expect(try state(alice)["isSet"] as? Bool == false)
        harness.secrets.removeAll { $0 == first }  // sent once above on purpose; the log and files must still not hold it
        try harness.expectNoSecretLeaked()
        harness.secrets.append(first)

        let firstMaterial = try Material(first, iterations: iterations, hint: "the first one")
        // A proof is a bearer secret while it stays the same: never in the log or a file.
        harness.secrets.append(LockedNoteCrypto.passphraseProof(firstMaterial.key).base64EncodedString())
        let set = try alice.post("/api/passphrase", firstMaterial.json)
        #expect(set.status == 200 && set.json?["isSet"] as? Bool == true)
        #expect(try alice.post("/api/passphrase", firstMaterial.json).code == "passphraseAlreadySet")
        initial = try state(alice)
        let current = try #require(initial["current"] as? [String: Any])
        let firstID = try #require(current["id"] as? Int)
        #expect(current["salt"] as? String == firstMaterial.json["salt"] as? String && current["hasHint"] as? Bool == true)

        // A note with an image of two chunks.
        let marker = "e2e-locked-body-\(UUID().uuidString.prefix(8))"
        let id = try alice.createNote(title: "Bank", body: marker)
        let image = Data((0..<(1024 * 1024 + 5000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let added = try alice.request("POST", "/api/notes/\(id)/attachments?kind=image&name=scan.png", raw: image)
        let attachmentID = try #require(added.json?["id"] as? String)

        let noteKey = LockedNoteCrypto.newNoteKey()
        let good = try lockRequest(
            passphraseID: firstID, noteKey: noteKey, passphraseKey: firstMaterial.key, body: marker, attachments: [attachmentID: image])
        var stale = good
        stale["passphraseProof"] = firstMaterial.proof(firstID + 100)
        #expect(try alice.post("/api/notes/\(id)/lock", stale).code == "conflict")
        var incomplete = good
        incomplete["attachments"] = [] as [Any]
        #expect(try alice.post("/api/notes/\(id)/lock", incomplete).code == "conflict")
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == marker, "still unlocked after refused locks")

        let locked = try alice.post("/api/notes/\(id)/lock", good)
        #expect(locked.status == 200 && (locked.json?["lock"] as? [String: Any])?["passphraseID"] as? Int == firstID)
        #expect(try alice.post("/api/notes/\(id)/lock", good).code == "wrongLockState")
        #expect(try alice.patch("/api/notes/\(id)", ["body": "plaintext edit"]).code == "wrongLockState", "a locked body never travels in the clear")
        #expect(try alice.request("POST", "/api/notes/\(id)/attachments?kind=image&name=b.png", raw: image).code == "wrongLockState")

        // The browser opens it: body and attachment chunks.
        let shown = try #require(try alice.get("/api/notes/\(id)").json)
        #expect(shown["body"] == nil)
        #expect(try open(alice, id, with: firstMaterial.key).body == marker)
        #expect((shown["attachments"] as? [[String: Any]])?.first?["id"] as? String == attachmentID)
        let sealedImage = try alice.get("/api/notes/\(id)/attachments/\(attachmentID)").body
        let firstChunk = sealedImage.prefix(1024 * 1024 + 28), secondChunk = sealedImage.dropFirst(1024 * 1024 + 28)
        let opened =
            try LockedNoteCrypto.openChunk(Data(firstChunk), with: noteKey, attachmentID: attachmentID, index: 0, isFinal: false)
            + LockedNoteCrypto.openChunk(Data(secondChunk), with: noteKey, attachmentID: attachmentID, index: 1, isFinal: true)
        #expect(opened == image)
        let files = try harness.homeFiles()
        for (url, data) in files {
            #expect(data.range(of: Data(marker.utf8)) == nil, "the body in \(url.lastPathComponent)")
        }
        #expect(!harness.daemonLog.contains(marker))

        // Edited in the browser: sealed again under the same note key.
        let edited = try LockedNoteCrypto.sealBody(Data("edited \(marker)".utf8), with: noteKey)
        var save: [String: Any] = [
            "iv": edited.iv.base64EncodedString(), "tag": edited.tag.base64EncodedString(), "ciphertext": edited.ciphertext.base64EncodedString(),
            "noteProof": SecureRandom.bytes(count: 32).base64EncodedString(),
        ]
        #expect(try alice.put("/api/notes/\(id)/locked-body", save).code == "wrongPassphrase", "a made-up note proof")
        save["noteProof"] = LockedNoteCrypto.noteProof(noteKey).base64EncodedString()
        let saved = try alice.put("/api/notes/\(id)/locked-body", save)
        #expect(saved.status == 200)
        #expect(try open(alice, id, with: firstMaterial.key).body == "edited \(marker)")

        // Wrong proofs are counted by the server: hint from the third, cleared by a right one.
        #expect(try state(alice)["failedAttempts"] as? Int == 0, "the right proof of the open cleared the made-up one")
        for attempt in 1...3 {
            let outcome = try alice.post(
                "/api/passphrase/proof", ["passphraseID": firstID, "proof": SecureRandom.bytes(count: 32).base64EncodedString()])
            #expect(outcome.status == 401 && outcome.code == "wrongPassphrase")
            #expect(outcome.json?["failedAttempts"] as? Int == attempt)
            #expect((outcome.json?["hint"] as? String == "the first one") == (attempt >= 3), "hint after \(attempt)")
        }
        #expect(try state(alice)["hint"] as? String == "the first one")
        #expect(try alice.post("/api/passphrase/attempts", ["passphraseID": firstID, "succeeded": true]).status == 404, "no more reports")
        #expect(try alice.post("/api/passphrase/proof", firstMaterial.proof(firstID)).json?["failedAttempts"] as? Int == 0)

        // Change: every note of the passphrase re-wrapped, in one request.
        let secondMaterial = try Material(second, iterations: iterations)
        var change = secondMaterial.json
        change["passphraseProof"] = firstMaterial.proof(firstID)
        change["notes"] = [] as [Any]
        #expect(try alice.post("/api/passphrase/change", change).code == "conflict", "a note left out")
        change["notes"] = [["id": id, "wrappedKey": try LockedNoteCrypto.wrap(noteKey, with: secondMaterial.key).base64EncodedString()]]
        change["passphraseProof"] = firstMaterial.proof(firstID + 1)
        #expect(try alice.post("/api/passphrase/change", change).code == "conflict", "not the current passphrase")
        change["passphraseProof"] = secondMaterial.proof(firstID)
        #expect(try alice.post("/api/passphrase/change", change).code == "wrongPassphrase", "a proof of another key")
        change["passphraseProof"] = firstMaterial.proof(firstID)
        #expect(try alice.post("/api/passphrase/change", change).status == 200)
        #expect(try open(alice, id, with: secondMaterial.key).body == "edited \(marker)")
        #expect(try alice.post("/api/notes/\(id)/wrapped-key", firstMaterial.proof(firstID)).code == "wrongPassphrase", "the old proof is gone")

        // Reset after forgetting it: needs the account password; the note stays on the old one
        // until the browser re-wraps it.
        let thirdMaterial = try Material(third, iterations: iterations)
        var reset = thirdMaterial.json
        reset["accountPassword"] = accountPassword + "x"
        #expect(try alice.post("/api/passphrase/reset", reset).code == "authFailed")
        reset["accountPassword"] = accountPassword
        let afterReset = try alice.post("/api/passphrase/reset", reset)
        #expect(afterReset.status == 200)
        let thirdID = try #require((afterReset.json?["current"] as? [String: Any])?["id"] as? Int)
        #expect(thirdID != firstID)
        let earlier = try #require((try alice.get("/api/notes/\(id)").json?["summary"] as? [String: Any])?["lock"] as? [String: Any])
        #expect(earlier["isCurrent"] as? Bool == false)
        let rewrapped = try alice.post(
            "/api/notes/\(id)/rewrap",
            [
                "passphraseProof": thirdMaterial.proof(thirdID),
                "wrappedKey": try LockedNoteCrypto.wrap(noteKey, with: thirdMaterial.key).base64EncodedString(),
                "noteProof": LockedNoteCrypto.noteProof(noteKey).base64EncodedString(),
            ])
        #expect(rewrapped.status == 200 && (rewrapped.json?["lock"] as? [String: Any])?["isCurrent"] as? Bool == true)
        #expect(try open(alice, id, with: thirdMaterial.key).body == "edited \(marker)")

        // A locked note cannot be shared.
        var bob = WebBrowser(server)
        let bobPassword = "e2e-bob-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(bobPassword)
        #expect(try bob.register("bob", bobPassword).status == 201)
        #expect(try alice.post("/api/notes/\(id)/participants", ["name": "bob"]).code == "wrongLockState")
        try harness.expectNoSecretLeaked()
    }

    @Test func noteLockedThroughTheWebOpensWithTresorNoteShowAndTheReverse() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let passphrase = "e2e-shared-passphrase-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(passphrase)
        var local = WebBrowser(server)
        #expect(try local.signIn("local", Self.passcode).status == 200)
        harness.secrets.append(local.token ?? "")
        let iterations = try #require(try state(local)["minimumIterations"] as? Int)
        let material = try Material(passphrase, iterations: iterations)
        #expect(try local.post("/api/passphrase", material.json).status == 200)
        let passphraseID = try #require((try state(local)["current"] as? [String: Any])?["id"] as? Int)

        // Locked in the "browser", opened by the CLI.
        let webBody = "e2e-web-locked-\(UUID().uuidString.prefix(8))"
        let id = try local.createNote(title: "From the web", body: webBody)
        let lock = try lockRequest(
            passphraseID: passphraseID, noteKey: LockedNoteCrypto.newNoteKey(), passphraseKey: material.key, body: webBody, attachments: [:])
        #expect(try local.post("/api/notes/\(id)/lock", lock).status == 200)
        let shown = try harness.tresor(["note", "show", id, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(shown.succeeded && shown.stdout.contains(webBody), "\(shown.stderr)")

        // Locked by the CLI, opened in the "browser".
        let cliBody = "e2e-cli-locked-\(UUID().uuidString.prefix(8))"
        let created = try harness.tresor(["note", "new", "--title", "From the CLI", "--body-stdin", "--json"], input: cliBody)
        let cliID = try #require((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["id"] as? String)
        let locked = try harness.tresor(["note", "lock", cliID, "--passphrase-stdin"], input: passphrase + "\n")
        #expect(locked.succeeded, "\(locked.stderr)")
        #expect(try open(local, cliID, with: material.key).body == cliBody)
        #expect(!harness.daemonLog.contains(webBody) && !harness.daemonLog.contains(cliBody))
        try harness.expectNoSecretLeaked()
    }
}
