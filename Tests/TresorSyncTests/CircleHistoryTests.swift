import Crypto
import Foundation
import Testing
import TresorSyncProtocol

@testable import TresorSync

@Suite("The circle's history, as the server keeps it")
struct CircleHistoryTests {
    @Test func theHistoryReadsBackAndVerifiesFromItsFirstList() throws {
        let circle = try TestCircle()
        let circleID = try #require(circle.history[0].list.circleID)
        let history = CircleHistory(lists: circle.history, endorsement: try circle.recoveryKey.endorse(circleID: circleID))
        let stored = try CircleHistory(encoded: history.encoded)
        #expect(stored == history && stored.circleID == circleID && stored.latest?.list == circle.list)
        #expect(try TrustedDeviceList.verifyingChain(stored.lists, circleID: circleID) == circle.list)
        #expect(try TrustedDeviceList.verifyingChain(stored.lists, recoveryKey: circle.recoveryKey, endorsement: stored.endorsement) == circle.list)
        // Another recovery key's endorsement of the same circle is refused.
        let other = CircleHistory(lists: circle.history, endorsement: try RecoveryKey.generate().endorse(circleID: circleID))
        #expect(throws: SyncError.self) {
            try TrustedDeviceList.verifyingChain(other.lists, recoveryKey: circle.recoveryKey, endorsement: other.endorsement)
        }
    }

    @Test func truncatedOrEmptyHistoriesAreMalformed() throws {
        let circle = try TestCircle()
        let circleID = try #require(circle.history[0].list.circleID)
        let encoded = CircleHistory(lists: circle.history, endorsement: try circle.recoveryKey.endorse(circleID: circleID)).encoded
        #expect(throws: SyncError.self) { try CircleHistory(encoded: encoded.dropLast()) }
        #expect(throws: SyncError.self) { try CircleHistory(encoded: Data("not a history".utf8)) }
        let empty = CircleHistory(lists: [], endorsement: try circle.recoveryKey.endorse(circleID: circleID))
        #expect(throws: SyncError.self) { try CircleHistory(encoded: empty.encoded) }
    }

    @Test func aDeviceAnswersASignInChallengeWithItsCredentialAndTheRecoveryKeySignsARequest() throws {
        let laptop = try LocalDevice.create(name: "laptop")
        let challenge = SyncChallenge(challengeID: UUID().uuidString, nonce: Data(repeating: 7, count: 32), expires: Date())
        let answer = try laptop.answer(challenge, account: "ada")
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: laptop.identity.signingKey)
        #expect(key.isValidSignature(answer, for: challenge.signedMessage(account: "ada", deviceID: laptop.deviceID)))
        #expect(!key.isValidSignature(answer, for: challenge.signedMessage(account: "bob", deviceID: laptop.deviceID)))

        let recovery = RecoveryKey.generate()
        let request = SyncJoinRequest(
            requestID: UUID().uuidString, deviceID: laptop.deviceID, deviceName: "laptop", identity: Data(), nonce: Data(repeating: 1, count: 16),
            created: Date(), expires: Date(), state: .pending)
        let signature = try recovery.signRecovery(of: request)
        let recoveryKey = try Curve25519.Signing.PublicKey(rawRepresentation: recovery.identity.identity.signingKey)
        #expect(recoveryKey.isValidSignature(signature, for: request.recoveryMessage()))
    }
}
