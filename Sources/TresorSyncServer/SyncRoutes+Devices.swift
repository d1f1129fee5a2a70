import Crypto
import Foundation
import Hummingbird
import TresorModel
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStore

/// Enrollment, sign-in, recovery joins and the session's device.
extension SyncRoutes {
    /// The web account's password (under the web sign-in's limits), then the device joins
    /// or creates the account's circle.
    func enroll<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        var decoded = try await decode(SyncEnrollment.self, request)
        // A password that cannot be one signs in as a wrong one would, after the same limits.
        let password = try? AccountPassword.taking(&decoded.password)
        let body = decoded
        let name = try Self.loginName(body.account)
        _ = try Self.deviceID(body.deviceID)
        guard (1...SyncLimits.deviceNameCharacters).contains(body.deviceName.count),
            TerminalText.isOneLineAsWritten(body.deviceName)
        else {
            throw SyncRefusal(.invalid, "a device name is 1 to \(SyncLimits.deviceNameCharacters) characters on one line, with no direction controls")
        }
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: body.credentialPublicKey)) != nil else {
            throw SyncRefusal(.invalid, "the credential public key is not an Ed25519 public key (32 bytes)")
        }
        guard body.deviceID == SyncDeviceID.of(signingKey: body.credentialPublicKey) else {
            throw SyncRefusal(.invalid, "the device id is not its credential key's (docs/SYNC.md, \"Devices and sign-in\")")
        }
        try Self.checkBlob(body.identity, "the device's identity")
        if let recovery = body.recoveryPublicKey, (try? Curve25519.Signing.PublicKey(rawRepresentation: recovery)) == nil {
            throw SyncRefusal(.invalid, "the recovery public key is not an Ed25519 public key (32 bytes)")
        }
        if let wait = try await relay.throttle.reserveSignIn(name: name, address: context.clientAddress) {
            throw SyncRefusal(.throttled, "too many failed sign-ins: try again in \(wait) s", retryAfterSeconds: wait)
        }
        var account: WebAccount?
        do {
            if let password { account = try await relay.accounts.authenticate(name: name, password: password) }
        } catch {
            try? await relay.throttle.signInFailed(name: name, address: context.clientAddress)
            throw error
        }
        guard let account else {
            try await relay.throttle.signInFailed(name: name, address: context.clientAddress)
            throw SyncRefusal(.unauthorized, "wrong name or password")
        }
        try await relay.throttle.signInSucceeded(name: name, address: context.clientAddress)
        let enrolled = try await relay.store.enroll(body, account: account.id)
        context.logger.notice("sync: device enrolled", metadata: ["device": "\(body.deviceID)", "state": "\(enrolled.state.rawValue)"])
        return try reply(enrolled, status: .created)
    }

    /// A signed challenge: a session for the device whose credential signed it. A removed
    /// device is told so, once its signature shows it is that device.
    func signIn<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let body = try await decode(SyncSignIn.self, request)
        guard let taken = try await relay.store.takeChallenge(body.challengeID),
            let account = try await relay.accounts.account(named: taken.loginName),
            let device = try await relay.store.device(taken.deviceID, account: account.id),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: device.key),
            key.isValidSignature(body.signature, for: taken.challenge.signedMessage(account: taken.loginName, deviceID: taken.deviceID))
        else {
            context.logger.notice("sync: sign-in refused")
            throw SyncRefusal.signInFailed
        }
        guard device.state != .removed else { throw SyncRefusal.removed }
        return try await reply(relay.store.startSession(account: account.id, deviceID: taken.deviceID, state: device.state))
    }

    /// A recovery join: the asking device, still pending, shows the circle's recovery identity's
    /// signature of its own request, and becomes trusted with the new device list.
    func recover<Context: SyncRequestContext>(_ request: Request, _ context: Context) async throws -> Response {
        let caller = try await signedIn(request, allowingPending: true)
        let body = try await decode(SyncRecovery.self, request)
        _ = try Self.checked(body.deviceList)
        guard let joining = try await relay.store.joinRequest(try context.parameters.require("id"), account: caller.account),
            joining.deviceID == caller.deviceID
        else { throw SyncRefusal(.notFound, "no such join request of this device") }
        guard let recoveryKey = try await relay.store.recoveryKey(account: caller.account),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: recoveryKey)
        else { throw SyncRefusal(.conflict, "this circle has no recovery key: a trusted device must approve") }
        guard key.isValidSignature(body.signature, for: joining.recoveryMessage()) else {
            context.logger.notice("sync: recovery signature refused", metadata: ["device": "\(caller.deviceID)"])
            throw SyncRefusal(.forbidden, "the recovery signature does not verify")
        }
        try await relay.store.answerJoinRequest(joining.requestID, account: caller.account, .recover(body.deviceList))
        await announce(.syncCircle(account: caller.account, device: caller.deviceID), context)
        context.logger.notice("sync: device joined with the recovery key", metadata: ["device": "\(caller.deviceID)"])
        return Response(status: .noContent)
    }

    /// The device of the request's session; a pending device only where `allowingPending`.
    func signedIn(_ request: Request, allowingPending: Bool) async throws -> SyncCaller {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let caller = try await relay.store.caller(token: String(header.dropFirst("Bearer ".count)))
        else { throw SyncRefusal(.unauthorized, "sign in first (POST /v1/sync/challenges, then /v1/sync/sessions)") }
        switch caller.state {
        case .removed: throw SyncRefusal.removed
        case .pending where !allowingPending: throw SyncRefusal(.devicePending, "this device waits for approval: only its join request answers it")
        default: return caller
        }
    }

    func trusted(_ request: Request) async throws -> SyncCaller {
        try await signedIn(request, allowingPending: false)
    }
}
