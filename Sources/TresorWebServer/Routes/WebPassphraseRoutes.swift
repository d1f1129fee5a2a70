import Foundation
import Hummingbird
import TresorCrypto
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// The account's passphrase for locked notes, made in the browser (docs/WEB.md): the server
/// stores salts, iteration counts, verifiers, proof hashes and re-wrapped keys, and never
/// receives a passphrase — a request body that carries a `passphrase` field is refused. An
/// entry is a proof of the derived key, which the server checks and counts itself
/// (docs/SECURITY.md, "Locked-note integrity on the web").
struct WebPassphraseRoutes {
    let services: WebServices

    /// `GET /api/passphrase`.
    struct PassphraseState: Encodable {
        var isSet: Bool
        var current: PassphraseRecord?
        var failedAttempts: Int
        /// From the third consecutive wrong entry on.
        var hint: String?
        var retryAfterSeconds: Int?
        var minimumIterations: Int
    }

    struct SetRequest: Decodable {
        var salt: Data
        var iterations: Int
        var verifier: Data
        var proofHash: Data
        var hint: String?
    }

    /// `{passphraseID, proof}`: a proof of the key of one passphrase (docs/WEB.md).
    struct ProofBody: Decodable {
        var passphraseID: Int64
        var proof: Data

        var proofOfKey: PassphraseProof { PassphraseProof(passphraseID: passphraseID, proof: proof) }
    }

    /// `POST /api/passphrase/proof`: an entry of the passphrase.
    struct EntryRequest: Decodable {
        var passphraseID: Int64
        var proof: Data
        /// The browser checked the passphrase itself (only used while no proof is recorded).
        var establish: Bool?
    }

    struct ChangeRequest: Decodable {
        struct RewrappedNote: Decodable {
            var id: String
            var wrappedKey: Data
        }
        /// Proves the current passphrase.
        var passphraseProof: ProofBody
        var salt: Data
        var iterations: Int
        var verifier: Data
        var proofHash: Data
        /// Absent: keep the hint; null: remove it.
        var hint: String??
        var notes: [RewrappedNote]

        enum CodingKeys: String, CodingKey { case passphraseProof, salt, iterations, verifier, proofHash, hint, notes }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            passphraseProof = try container.decode(ProofBody.self, forKey: .passphraseProof)
            salt = try container.decode(Data.self, forKey: .salt)
            iterations = try container.decode(Int.self, forKey: .iterations)
            verifier = try container.decode(Data.self, forKey: .verifier)
            proofHash = try container.decode(Data.self, forKey: .proofHash)
            hint = container.contains(.hint) ? .some(try container.decodeIfPresent(String.self, forKey: .hint)) : nil
            notes = try container.decode([RewrappedNote].self, forKey: .notes)
        }
    }

    struct ResetRequest: Decodable {
        var accountPassword: String
        var salt: Data
        var iterations: Int
        var verifier: Data
        var proofHash: Data
        var hint: String?
    }

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/passphrase") { _, context -> Response in
            let account = try context.requireSession().account
            return try WebCoding.response(try await services.perform("passphrase status", context) { try await Self.state($0, account.id) })
        }
        router.post("/api/passphrase") { request, context -> Response in
            let account = try context.requireSession().account
            let body = try await WebCoding.decodeWithoutSecret(SetRequest.self, request)
            let material = try PassphraseMaterial(salt: body.salt, iterations: body.iterations, verifier: body.verifier, proofHash: body.proofHash)
            let state = try await services.perform("passphrase set", context) { store in
                try await store.setPassphrase(material, hint: body.hint, account: account.id)
                return try await Self.state(store, account.id)
            }
            return try WebCoding.response(state)
        }
        router.post("/api/passphrase/change") { request, context -> Response in
            let account = try context.requireSession().account
            let body = try await WebCoding.decodeWithoutSecret(ChangeRequest.self, request, limit: WebLimits.jsonBytes)
            let material = try PassphraseMaterial(salt: body.salt, iterations: body.iterations, verifier: body.verifier, proofHash: body.proofHash)
            var keys: [String: Data] = [:]
            for note in body.notes {
                guard keys.updateValue(note.wrappedKey, forKey: note.id) == nil else { throw APIError(.param, "a note appears twice") }
            }
            let state = try await services.perform("passphrase change", context) { [keys] store in
                try await store.changePassphrase(
                    proof: body.passphraseProof.proofOfKey, to: material, hint: body.hint, rewrappedKeys: keys, account: account.id)
                return try await Self.state(store, account.id)
            }
            return try WebCoding.response(state)
        }
        router.post("/api/passphrase/reset") { request, context -> Response in
            let session = try context.requireSession()
            var decoded = try await WebCoding.decodeWithoutSecret(ResetRequest.self, request)
            let accountPassword = try SecretText.taking(&decoded.accountPassword)
            let body = decoded
            let material = try PassphraseMaterial(salt: body.salt, iterations: body.iterations, verifier: body.verifier, proofHash: body.proofHash)
            try await checkAccountPassword(accountPassword, session.account, context)
            let state = try await services.perform("passphrase reset", context) { store in
                try await store.resetPassphrase(to: material, hint: body.hint, account: session.account.id)
                return try await Self.state(store, session.account.id)
            }
            return try WebCoding.response(state)
        }
        // The browser no longer reports "right" or "wrong": it proves the key and the server
        // decides (a wrong proof is counted; a right one clears the count).
        router.post("/api/passphrase/proof") { request, context -> Response in
            let account = try context.requireSession().account
            let body = try await WebCoding.decodeWithoutSecret(EntryRequest.self, request)
            let outcome = try await services.perform("passphrase entry", context) { store in
                try await store.enterPassphrase(
                    PassphraseProof(passphraseID: body.passphraseID, proof: body.proof), establish: body.establish ?? false, account: account.id)
            }
            return try WebCoding.response(outcome)
        }
    }

    /// A reset needs the account password (docs/WEB.md, "Endpoints"; docs/API.md, "The
    /// passphrase"): the keybag passcode for the local account, the stored hash otherwise. Wrong
    /// ones count towards the sign-in limits.
    private func checkAccountPassword(_ text: SecretText, _ account: WebAccount, _ context: WebRequestContext) async throws {
        let services = self.services
        if let wait = try await services.throttle.retryAfter(name: account.name, address: context.clientAddress) {
            throw APIError(.throttled, "too many wrong passwords: try again in \(wait) s", retryAfterSeconds: wait)
        }
        let correct: Bool
        if account.isLocal, let home = services.home {
            switch try await home.check(passcode: text) {
            case .notAPasscode: throw APIError(.authFailed, "wrong account password")
            case .wrong: correct = false
            case .right: correct = true
            }
        } else {
            guard let password = try? AccountPassword(text) else { throw APIError(.authFailed, "wrong account password") }
            correct = try await services.store.checkPassword(password, account: account.id)
        }
        guard correct else {
            try await services.throttle.recordFailure(name: account.name, address: context.clientAddress)
            context.logger.notice("web: passphrase reset refused", metadata: ["code": "authFailed"])
            throw APIError(.authFailed, "wrong account password")
        }
    }

    static func state(_ store: any WebStore, _ account: AccountID) async throws -> PassphraseState {
        let status = try await store.passphraseStatus(account: account)
        let hint = status.failedAttempts >= NoteRules.hintAfterFailures ? try await store.passphraseHint(account: account) : nil
        return PassphraseState(
            isSet: status.isSet, current: try await store.passphraseRecord(account: account), failedAttempts: status.failedAttempts,
            hint: hint, retryAfterSeconds: status.retryAfterSeconds, minimumIterations: store.minimumIterations)
    }
}
