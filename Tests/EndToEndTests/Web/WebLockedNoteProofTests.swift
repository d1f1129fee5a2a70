import Foundation
import Synchronization
import Testing
import TresorCrypto
import TresorTestSupport

/// docs/SECURITY.md, "Locked-note integrity on the web": a web session
/// that does not hold the notes passphrase — someone who has the cookie, or knows the
/// account password, but not the passphrase — tries every change to locked notes the API
/// offers. Each is refused and nothing changes: the note, locked by the CLI, still opens with
/// its passphrase in `tresor note show`, and the wrong-entry count is not cleared.
@Suite(.blocksItsThread, .serialized) struct WebLockedNoteProofTests {
    static let passcode = "e2e-web-proof-passcode"

    func random(_ count: Int) -> String { SecureRandom.bytes(count: count).base64EncodedString() }

    /// The local account's notes passphrase state, as the web reports it.
    func state(_ browser: WebBrowser) throws -> [String: Any] { try #require(try browser.get("/api/passphrase").json) }

    /// `tresor note show` with `passphrase` on standard input, after ending the daemon's own
    /// secure session (so the passphrase is really checked).
    func cliBody(_ harness: Harness, _ id: String, _ passphrase: String) throws -> Harness.Result {
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        return try harness.tresor(["note", "show", id, "--json", "--passphrase-stdin"], input: passphrase + "\n")
    }

    @Test func aSessionWithoutThePassphraseChangesNoLockedNote() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let passphrase = "e2e-proof-passphrase-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(passphrase)
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        let body = "e2e-proof-body-\(UUID().uuidString.prefix(8))"
        let created = try harness.tresor(["note", "new", "--title", "Vault", "--body-stdin", "--json"], input: body)
        let id = try #require((try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["id"] as? String)
        #expect(try harness.tresor(["note", "lock", id, "--passphrase-stdin"], input: passphrase + "\n").succeeded)

        // `note lock-now` ends the local account's web sessions: the session signs in after it.
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        var session = WebBrowser(server)
        #expect(try session.signIn("local", Self.passcode).status == 200)
        harness.secrets.append(session.token ?? "")
        let current = try #require(try state(session)["current"] as? [String: Any])
        let passphraseID = try #require(current["id"] as? Int)

        // Three wrong entries typed in the CLI are counted; the session cannot clear them by
        // claiming a right entry, nor by "establishing" a proof of its own.
        for _ in 0..<3 {
            let wrong = try harness.tresor(["note", "show", id, "--passphrase-stdin"], input: "not-it-\(UUID().uuidString.prefix(6))\n")
            #expect(!wrong.succeeded)
        }
        #expect(try state(session)["failedAttempts"] as? Int == 3)
        _ = try session.post("/api/passphrase/attempts", ["passphraseID": passphraseID, "succeeded": true])
        _ = try session.post("/api/passphrase/proof", ["passphraseID": passphraseID, "proof": random(32), "establish": true])
        let failures = try #require(try state(session)["failedAttempts"] as? Int)
        #expect(failures >= 3, "the wrong-entry count was cleared without the passphrase (now \(failures))")
        // The owner's right entry (typed in the CLI) clears the count again.
        #expect(try cliBody(harness, id, passphrase).succeeded)
        // (its lock-now ended the web session: a new one reads on)
        session = WebBrowser(server)
        #expect(try session.signIn("local", Self.passcode).status == 200)
        harness.secrets.append(session.token ?? "")
        #expect(try state(session)["failedAttempts"] as? Int == 0)

        // Key material: the salt and rounds (needed to derive the key) but no verifier and no
        // wrapped key — either would let the session guess the passphrase offline.
        #expect(current["salt"] != nil && current["iterations"] != nil)
        #expect(current["verifier"] == nil, "the verifier is served without a proof")
        let locked = try #require(try session.get("/api/notes/\(id)").json?["locked"] as? [String: Any])
        #expect(locked["wrappedKey"] == nil, "the wrapped note key is served without a proof")
        let keyRead = try session.post("/api/notes/\(id)/wrapped-key", ["passphraseID": passphraseID])
        #expect(keyRead.status == 400 || keyRead.status == 401, "\(keyRead.status) \(keyRead.text)")
        #expect(keyRead.json?["wrappedKey"] == nil)

        // Re-wrap every note with random keys (the change of passphrase), no proof.
        let change = try session.post(
            "/api/passphrase/change",
            [
                "fromPassphraseID": passphraseID, "salt": random(16), "iterations": 600_000, "verifier": random(24),
                "proofHash": random(32), "notes": [["id": id, "wrappedKey": random(24)]],
            ])
        #expect(change.status >= 400, "a change without the passphrase: \(change.status)")

        // Overwrite the locked body with random bytes, without and with a made-up note proof.
        for extra in [[:], ["noteProof": random(32)]] as [[String: Any]] {
            let overwrite = try session.put(
                "/api/notes/\(id)/locked-body",
                [
                    "iv": random(12), "tag": random(16), "ciphertext": random(64),
                ].merging(extra) { $1 })
            #expect(overwrite.status >= 400, "an overwrite without the note key: \(overwrite.status)")
        }

        // Lock another note under the current passphrase with a key nobody holds.
        let other = try session.createNote(title: "Plain", body: "still readable")
        let lock = try session.post(
            "/api/notes/\(other)/lock",
            [
                "passphraseID": passphraseID, "wrappedKey": random(24), "iv": random(12), "tag": random(16),
                "ciphertext": random(32), "attachments": [] as [Any], "noteProofHash": random(32),
            ])
        #expect(lock.status >= 400, "a lock without the passphrase: \(lock.status)")
        #expect(try session.get("/api/notes/\(other)").json?["body"] as? String == "still readable")

        // After a reset (the account password is enough for that, by design) the note is of an
        // earlier passphrase: re-wrapping it under the new one needs the note's key.
        let reset = try session.post(
            "/api/passphrase/reset",
            [
                "accountPassword": Self.passcode, "salt": random(16), "iterations": 600_000, "verifier": random(24), "proofHash": random(32),
            ])
        #expect(reset.status == 200, "\(reset.text)")
        let newID = try #require((try state(session)["current"] as? [String: Any])?["id"] as? Int)
        let rewrap = try session.post("/api/notes/\(id)/rewrap", ["passphraseID": newID, "wrappedKey": random(24)])
        #expect(rewrap.status >= 400, "a re-wrap without the note key: \(rewrap.status)")

        // Nothing changed: the note opens in the CLI with its passphrase, with its body.
        let shown = try cliBody(harness, id, passphrase)
        #expect(shown.succeeded, "\(shown.stderr)")
        #expect((try? JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])?["body"] as? String == body)
        try harness.expectNoSecretLeaked()
    }

    /// docs/SECURITY.md, "Throttles that cannot be raced": many concurrent wrong proofs over HTTP. The server checks a
    /// proof inside the transaction that counts it, so no more are checked than the free
    /// allowance (5); the rest are refused unchecked with `throttled`.
    @Test func concurrentWrongProofsAreCheckedAtMostFiveTimes() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let passphrase = "e2e-race-passphrase-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(passphrase)
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        var session = WebBrowser(server)
        #expect(try session.signIn("local", Self.passcode).status == 200)
        harness.secrets.append(session.token ?? "")
        let passphraseID = try #require((try state(session)["current"] as? [String: Any])?["id"] as? Int)

        nonisolated(unsafe) let browser = session
        let codes = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            let code: String
            do {
                let answer = try browser.post(
                    "/api/passphrase/proof", ["passphraseID": passphraseID, "proof": SecureRandom.bytes(count: 32).base64EncodedString()])
                code = answer.code ?? "\(answer.status)"
            } catch {
                code = "\(error)"
            }
            codes.withLock { $0.append(code) }
        }
        let answers = codes.withLock { $0 }
        #expect(answers.filter { $0 == "wrongPassphrase" }.count == 5, "\(answers)")
        #expect(answers.filter { $0 == "throttled" }.count == 35, "\(answers)")
        #expect(try state(session)["failedAttempts"] as? Int == 5)
        try harness.expectNoSecretLeaked()
    }
}
