import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// Enrollment, device sign-in, join requests, removal and the device list, through the routes.
@Suite("Sync devices", .enabled(if: TestPostgres.shouldRun))
struct SyncDevicesTests {
    @Test func signInRefusesAWrongSignatureAnExpiredOrUsedChallengeAndAnUnknownDevice() async throws {
        let clock = TestClock(Date())
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), clock: clock)
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)

            // Signed by another key.
            let challenge = try await device.challenge(client)
            let impostor = Curve25519.Signing.PrivateKey()
            let forged = try impostor.signature(for: challenge.signedMessage(account: "ada", deviceID: device.id))
            let wrong = try await client.send(.post, "/v1/sync/sessions", SyncSignIn(challengeID: challenge.challengeID, signature: forged))
            #expect(wrong.status == .unauthorized && wrong.code == .unauthorized)
            // That challenge is used up now, even by the right signature.
            #expect(try await device.signIn(client, answering: challenge).code == .unauthorized)

            // A good answer works once.
            let fresh = try await device.challenge(client)
            let first = try await device.signIn(client, answering: fresh)
            #expect(try first.status == .ok && first.decode(SyncSession.self).state == .trusted)
            #expect(try await device.signIn(client, answering: fresh).code == .unauthorized, "a challenge answers once")

            // Signed for another device or another challenge: refused.
            let other = try await device.challenge(client)
            let misbound = try device.credential.signature(for: other.signedMessage(account: "ada", deviceID: TestDevice.unknownID()))
            let misboundAnswer = try await client.send(.post, "/v1/sync/sessions", SyncSignIn(challengeID: other.challengeID, signature: misbound))
            #expect(misboundAnswer.code == .unauthorized)

            // An expired challenge.
            let old = try await device.challenge(client)
            clock.advance(by: SyncLimits.challengeSeconds + 1)
            #expect(try await device.signIn(client, answering: old).code == .unauthorized)

            // A device the account does not have.
            let stranger = TestDevice(account: "ada")
            #expect(try await stranger.signIn(client).code == .unauthorized)
            // A token that is not a session's.
            var guessing = device
            guessing.token = SessionTokens.random()
            #expect(try await guessing.pull(client).code == .unauthorized)
        }
    }

    @Test func noSessionTokenOrPasswordIsStored() async throws {
        let url = try await TestPostgres.freshDatabase()
        let instance = try await SyncInstance.open(url: url)
        let password = "sync-password-\(UUID().uuidString.prefix(8))"
        try await instance.account("ada", password: password)
        let token = try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            let enrolled = try await client.send(.post, "/v1/sync/devices", device.enrollment(password: password))
            #expect(enrolled.status == .created)
            device.token = try await device.signIn(client).decode(SyncSession.self).token
            #expect(try await device.pull(client).status == .ok)
            return try #require(device.token)
        }
        let dump = try await TestPostgres.dump(database: TestPostgres.databaseName(of: url))
        #expect(!dump.contains(token) && !dump.contains(password), "only the token's digest is stored, and no password")
        let digest = SessionTokens.digest(token).map { String(format: "%02x", $0) }.joined()
        #expect(dump.contains(digest), "the session is found by its digest")
    }

    @Test func challengesWaitingPerAccountAreBounded() async throws {
        let clock = TestClock(Date())
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), clock: clock)
        try await instance.application.test(.router) { client in
            let asking = SyncChallengeRequest(account: "ada", deviceID: TestDevice.unknownID())
            for _ in 0..<SyncStore.openChallengesPerName {
                #expect(try await client.send(.post, "/v1/sync/challenges", asking).status == .ok)
            }
            let refused = try await client.send(.post, "/v1/sync/challenges", asking)
            #expect(refused.status == .tooManyRequests && refused.code == .throttled && refused.headers[.retryAfter] != nil)
            // Another account's devices are not held up.
            let bobs = SyncChallengeRequest(account: "bob", deviceID: asking.deviceID)
            #expect(try await client.send(.post, "/v1/sync/challenges", bobs).status == .ok)
            // Expired ones make room again.
            clock.advance(by: SyncLimits.challengeSeconds + 1)
            #expect(try await client.send(.post, "/v1/sync/challenges", asking).status == .ok)
        }
    }

    @Test func enrollingWithAWrongPasswordCreatesNothing() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            let device = TestDevice(account: "ada")
            let refused = try await client.send(.post, "/v1/sync/devices", device.enrollment(password: "wrong password here"))
            #expect(refused.status == .unauthorized && refused.code == .unauthorized)
            let unknown = try await client.send(.post, "/v1/sync/devices", TestDevice(account: "nobody").enrollment())
            #expect(unknown.code == .unauthorized)
            var badKey = device.enrollment()
            badKey.credentialPublicKey = Data(repeating: 1, count: 31)
            #expect(try await client.send(.post, "/v1/sync/devices", badKey).code == .invalid)
            // A device's id with another key: no key takes over an id that is not its own.
            var borrowedID = device.enrollment()
            borrowedID.credentialPublicKey = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation
            #expect(try await client.send(.post, "/v1/sync/devices", borrowedID).code == .invalid)
            // A name every other device lists later: drawn as written, on one line.
            for name in ["two\nlines", "laptop\u{202E}potksed", "line\u{2028}separator"] {
                var misleading = device.enrollment()
                misleading.deviceName = name
                #expect(try await client.send(.post, "/v1/sync/devices", misleading).code == .invalid, "\(name.debugDescription)")
            }
            // Still the first device: the refused enrollments made no circle.
            var first = device
            #expect(try await first.join(client).createdCircle)
            // The same device id again is a conflict.
            #expect(try await client.send(.post, "/v1/sync/devices", device.enrollment()).code == .conflict)
        }
    }

    /// A pending device may withdraw itself (a recovery that failed) and nothing else: not the
    /// trusted device, not another pending one. Withdrawn, its join request no longer waits.
    @Test func aPendingDeviceWithdrawsItselfOnly() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), desktop = TestDevice(account: "ada"), phone = TestDevice(account: "ada")
            try await laptop.join(client)
            #expect(try await desktop.join(client).joinRequest != nil)
            #expect(try await phone.join(client).joinRequest != nil)
            for other in [laptop.id, phone.id] {
                #expect(try await client.execute(uri: "/v1/sync/devices/\(other)", method: .delete, headers: desktop.bearer).code == .devicePending)
            }
            #expect(try await client.execute(uri: "/v1/sync/devices/\(desktop.id)", method: .delete, headers: desktop.bearer).status == .noContent)
            let waiting = try await client.execute(uri: "/v1/sync/join-requests", method: .get, headers: laptop.bearer).decode([SyncJoinRequest].self)
            #expect(waiting.map(\.deviceID) == [phone.id])
            let devices = try await client.execute(uri: "/v1/sync/devices", method: .get, headers: laptop.bearer).decode([SyncDevice].self)
            #expect(devices.first { $0.deviceID == desktop.id }?.state == .removed)
            #expect(devices.first { $0.deviceID == laptop.id }?.state == .trusted)
        }
    }

    @Test func aRemovedDeviceIsRefusedAtOnceAndToldToLeave() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), desktop = TestDevice(account: "ada")
            try await laptop.join(client)
            let request = try #require(try await desktop.join(client).joinRequest)
            try await approve(request, by: laptop, client, listVersion: (0, 1))
            #expect(try await desktop.pull(client).status == .ok)
            #expect(try await desktop.push(client, [desktop.upload("one"), desktop.upload("two")]).status == .ok)

            #expect(try await client.execute(uri: "/v1/sync/devices/\(desktop.id)", method: .delete, headers: laptop.bearer).status == .noContent)
            // Its open session is refused on the next request, with the code that says leave.
            let refused = try await desktop.pull(client)
            #expect(refused.status == .forbidden && refused.code == .deviceRemoved)
            #expect(try await desktop.push(client, [desktop.upload("after removal")]).code == .deviceRemoved)
            // Its credential is refused from then on: a new sign-in is told to leave too.
            #expect(try await desktop.signIn(client).code == .deviceRemoved)
            let devices = try await client.execute(uri: "/v1/sync/devices", method: .get, headers: laptop.bearer).decode([SyncDevice].self)
            #expect(devices.first { $0.deviceID == desktop.id }?.state == .removed)
            // What the remover signs as the last of its records still accepted, in one query.
            #expect(devices.first { $0.deviceID == desktop.id }?.lastSequence == 2)
            #expect(devices.first { $0.deviceID == laptop.id }?.lastSequence == 0)
            #expect(try await laptop.pull(client).decode(SyncPage.self).records.count == 2, "nothing it sent after removal was stored")
        }
    }

    @Test func aJoinApprovedStoresTheListAndTheEnvelopeAndTrustsTheDevice() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), desktop = TestDevice(account: "ada")
            try await laptop.join(client)
            let list = SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list v1".utf8))
            #expect(try await client.send(.put, "/v1/sync/device-list", list, headers: laptop.bearer).status == .noContent)
            let enrolled = try await desktop.join(client)
            let request = try #require(enrolled.joinRequest)
            #expect(enrolled.state == .pending && !enrolled.createdCircle)

            // A pending device may poll its request and read the device list, and nothing else.
            let polled = try await client.execute(uri: "/v1/sync/join-requests/\(request.requestID)", method: .get, headers: desktop.bearer)
            #expect(try polled.decode(SyncJoinRequest.self).state == .pending)
            #expect(try await desktop.pull(client).code == .devicePending)
            #expect(try await desktop.push(client, [desktop.upload("early")]).code == .devicePending)
            let listRead = try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: desktop.bearer)
            #expect(try listRead.decode(SyncDeviceList.self) == SyncDeviceList(version: 1, blob: Data("list v1".utf8)))
            #expect(try await client.execute(uri: "/v1/sync/devices", method: .get, headers: desktop.bearer).code == .devicePending)

            // The trusted device lists it with what the words are made of.
            let pending = try await client.execute(uri: "/v1/sync/join-requests", method: .get, headers: laptop.bearer).decode([SyncJoinRequest].self)
            #expect(pending.map(\.requestID) == [request.requestID] && pending.first?.identity == Data("identity of \(desktop.id)".utf8))
            #expect(pending.first?.nonce.count == 16)

            try await approve(request, by: laptop, client, listVersion: (1, 2))
            #expect(
                try await client.execute(uri: "/v1/sync/join-requests/\(request.requestID)", method: .get, headers: desktop.bearer)
                    .decode(SyncJoinRequest.self).state == .approved)
            let envelopes = try await client.execute(uri: "/v1/sync/key-envelopes", method: .get, headers: desktop.bearer)
                .decode(SyncKeyEnvelopes.self)
            #expect(envelopes.envelopes == [SyncKeyEnvelope(deviceID: desktop.id, epoch: 1, blob: Data("wrapped for \(desktop.id)".utf8))])
            let stored = try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: desktop.bearer).decode(SyncDeviceList.self)
            #expect(stored == SyncDeviceList(version: 2, blob: Data("list v2".utf8)))
            #expect(try await desktop.pull(client).status == .ok)
            // Answered once: a second approval is a conflict.
            let again = try await client.send(.post, "/v1/sync/join-requests/\(request.requestID)/deny", [String: String](), headers: laptop.bearer)
            #expect(again.code == .conflict)
        }
    }

    @Test func anExpiredOrDeniedJoinRequestChangesNothing() async throws {
        let clock = TestClock(Date())
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), clock: clock)
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada"), late = TestDevice(account: "ada"), denied = TestDevice(account: "ada")
            try await laptop.join(client)
            let list = SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list v1".utf8))
            #expect(try await client.send(.put, "/v1/sync/device-list", list, headers: laptop.bearer).status == .noContent)
            let lateRequest = try #require(try await late.join(client).joinRequest)

            clock.advance(by: SyncLimits.joinRequestSeconds + 1)
            let approval = SyncApproval(
                deviceList: SyncDeviceListUpdate(expectedVersion: 1, version: 2, blob: Data("list v2".utf8)),
                envelope: SyncKeyEnvelope(deviceID: late.id, epoch: 1, blob: Data("wrapped".utf8)))
            let expired = try await client.send(.post, "/v1/sync/join-requests/\(lateRequest.requestID)/approve", approval, headers: laptop.bearer)
            #expect(expired.status == .gone && expired.code == .expired)
            let waiting = try await client.execute(uri: "/v1/sync/join-requests", method: .get, headers: laptop.bearer)
            #expect(try waiting.decode([SyncJoinRequest].self).isEmpty)

            let deniedRequest = try #require(try await denied.join(client).joinRequest)
            let deny = try await client.send(
                .post, "/v1/sync/join-requests/\(deniedRequest.requestID)/deny", [String: String](), headers: laptop.bearer)
            #expect(deny.status == .noContent)
            #expect(try await denied.pull(client).code == .deviceRemoved, "a denied device is told to leave")

            // Nothing else changed: the list is version 1, neither device is trusted, no envelope.
            #expect(
                try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: laptop.bearer).decode(SyncDeviceList.self)
                    == SyncDeviceList(version: 1, blob: Data("list v1".utf8)))
            let devices = try await client.execute(uri: "/v1/sync/devices", method: .get, headers: laptop.bearer).decode([SyncDevice].self)
            #expect(devices.first { $0.deviceID == late.id }?.state == .pending)
            #expect(devices.first { $0.deviceID == denied.id }?.state == .removed)
            #expect(try await late.pull(client).code == .devicePending)
            let ada = try #require(try await instance.storage.store.account(named: "ada"))
            #expect(try await instance.relay.store.envelopes(account: ada.id, deviceID: late.id, from: 0).isEmpty)
        }
    }

    @Test func aRecoveryJoinNeedsTheRecoveryIdentitysSignatureOfThatRequest() async throws {
        let clock = TestClock(Date())
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase(), clock: clock)
        try await instance.account("ada")
        let recovery = Curve25519.Signing.PrivateKey()
        try await instance.application.test(.router) { client in
            // The first device gives the recovery identity's public key, and wraps the circle key for it.
            var lost = TestDevice(account: "ada")
            var first = lost.enrollment()
            first.recoveryPublicKey = recovery.publicKey.rawRepresentation
            #expect(try await client.send(.post, "/v1/sync/devices", first).status == .created)
            lost.token = try await lost.signIn(client).decode(SyncSession.self).token
            let wrapped = SyncRecoveryEnvelopes(envelopes: [SyncRecoveryEnvelope(epoch: 1, blob: Data("circle key for recovery".utf8))])
            #expect(try await client.send(.put, "/v1/sync/recovery-envelopes", wrapped, headers: lost.bearer).status == .noContent)
            let list = SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list v1".utf8))
            #expect(try await client.send(.put, "/v1/sync/device-list", list, headers: lost.bearer).status == .noContent)

            // A new device, every other one lost: it asks to join, then signs its request with the recovery key.
            var new = TestDevice(account: "ada")
            let request = try #require(try await new.join(client).joinRequest)
            #expect(try await client.execute(uri: "/v1/sync/recovery-envelopes", method: .get, headers: new.bearer).code == .devicePending)
            let nextList = SyncDeviceListUpdate(expectedVersion: 1, version: 2, blob: Data("list v2 signed by recovery".utf8))
            let path = "/v1/sync/join-requests/\(request.requestID)/recover"

            // Signed by another key, or for another request: refused, nothing changed.
            let forged = SyncRecovery(signature: try Curve25519.Signing.PrivateKey().signature(for: request.recoveryMessage()), deviceList: nextList)
            let refused = try await client.send(.post, path, forged, headers: new.bearer)
            #expect(refused.status == .forbidden && refused.code == .forbidden)
            var other = request
            other.requestID = UUID().uuidString.lowercased()
            let misbound = SyncRecovery(signature: try recovery.signature(for: other.recoveryMessage()), deviceList: nextList)
            #expect(try await client.send(.post, path, misbound, headers: new.bearer).code == .forbidden)
            // Another device may not use this device's request.
            #expect(try await client.send(.post, path, misbound, headers: lost.bearer).code == .notFound)
            #expect(try await new.pull(client).code == .devicePending)

            // The right signature: trusted, the list stored; it reads the recovery envelope.
            let signed = SyncRecovery(signature: try recovery.signature(for: request.recoveryMessage()), deviceList: nextList)
            #expect(try await client.send(.post, path, signed, headers: new.bearer).status == .noContent)
            #expect(try await new.pull(client).status == .ok)
            let envelopes = try await client.execute(uri: "/v1/sync/recovery-envelopes", method: .get, headers: new.bearer)
            #expect(try envelopes.decode(SyncRecoveryEnvelopes.self) == wrapped)
            let stored = try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: new.bearer)
            #expect(try stored.decode(SyncDeviceList.self).version == 2)

            // An expired request does not recover.
            var late = TestDevice(account: "ada")
            let lateRequest = try #require(try await late.join(client).joinRequest)
            clock.advance(by: SyncLimits.joinRequestSeconds + 1)
            late.token = try await late.signIn(client).decode(SyncSession.self).token
            let lateList = SyncDeviceListUpdate(expectedVersion: 2, version: 3, blob: Data("list v3".utf8))
            let lateRecovery = SyncRecovery(signature: try recovery.signature(for: lateRequest.recoveryMessage()), deviceList: lateList)
            let expired = try await client.send(.post, "/v1/sync/join-requests/\(lateRequest.requestID)/recover", lateRecovery, headers: late.bearer)
            #expect(expired.code == .expired)
        }
    }

    @Test func aCircleWithoutARecoveryKeyHasNoRecoveryJoin() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var first = TestDevice(account: "ada"), new = TestDevice(account: "ada")
            try await first.join(client)
            let request = try #require(try await new.join(client).joinRequest)
            let attempt = SyncRecovery(
                signature: try Curve25519.Signing.PrivateKey().signature(for: request.recoveryMessage()),
                deviceList: SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("list".utf8)))
            let refused = try await client.send(.post, "/v1/sync/join-requests/\(request.requestID)/recover", attempt, headers: new.bearer)
            #expect(refused.status == .conflict && refused.code == .conflict)
            #expect(try await new.pull(client).code == .devicePending)
        }
    }

    @Test func theDeviceListIsSwappedOnlyFromTheVersionStored() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var laptop = TestDevice(account: "ada")
            try await laptop.join(client)
            let put = { (expected: UInt64, version: UInt64, text: String) in
                let update = SyncDeviceListUpdate(expectedVersion: expected, version: version, blob: Data(text.utf8))
                return try await client.send(.put, "/v1/sync/device-list", update, headers: laptop.bearer)
            }
            #expect(try await put(0, 1, "v1").status == .noContent)
            #expect(try await put(1, 2, "v2").status == .noContent)
            // A writer that read version 1 is refused; so is a version that does not move on.
            let stale = try await put(1, 2, "stale v2")
            #expect(stale.status == .conflict && stale.code == .staleDeviceList)
            #expect(try await put(2, 2, "same").code == .invalid)
            #expect(try await put(2, 3, "").code == .invalid)
            let list = try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: laptop.bearer).decode(SyncDeviceList.self)
            #expect(list == SyncDeviceList(version: 2, blob: Data("v2".utf8)))
        }
    }

    /// Approves `request` for the joining device as a trusted device does.
    private func approve(
        _ request: SyncJoinRequest, by device: TestDevice, _ client: some TestClientProtocol, listVersion: (UInt64, UInt64)
    ) async throws {
        let approval = SyncApproval(
            deviceList: SyncDeviceListUpdate(expectedVersion: listVersion.0, version: listVersion.1, blob: Data("list v\(listVersion.1)".utf8)),
            envelope: SyncKeyEnvelope(deviceID: request.deviceID, epoch: 1, blob: Data("wrapped for \(request.deviceID)".utf8)))
        let answer = try await client.send(.post, "/v1/sync/join-requests/\(request.requestID)/approve", approval, headers: device.bearer)
        #expect(answer.status == .noContent, "\(answer.text)")
    }
}
