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

    /// A hundred devices' worth of list changes: each joins, a third of them are removed (each a
    /// new epoch), a few leave, and the keys roll after the leaves. Each list after the first is
    /// kept as its change, so the history stays far under the relay's limit for a device list —
    /// where every list whole would pass it at about sixty devices — and reads back to the same
    /// lists, which verify from the first.
    @Test func aHundredDevicesWorthOfListChangesStayUnderTheRelaysLimit() throws {
        let creator = try LocalDevice.create(name: "device 0")
        let recovery = RecoveryKey.generate()
        var lists = [try TrustedDeviceList.create(account: "ada", device: creator, recoveryKey: recovery)]
        var devices = [creator]
        for n in 1..<100 {
            let device = try LocalDevice.create(name: "device \(n) with a name of some length")
            lists.append(try lists[lists.count - 1].list.adding(device.identity).signed(by: devices[n / 2]))
            devices.append(device)
        }
        for n in stride(from: 3, to: 100, by: 3) {
            let next = try lists[lists.count - 1].list.removing(devices[n].deviceID, lastAcceptedSequence: UInt64(n))
            lists.append(try next.signed(by: creator))
        }
        for n in [1, 2, 4] {
            lists.append(try lists[lists.count - 1].list.leaving(devices[n], lastAcceptedSequence: 7))
            lists.append(try lists[lists.count - 1].list.rolled().signed(by: creator))
        }
        let circleID = try #require(lists[0].list.circleID)
        let history = CircleHistory(lists: lists, endorsement: try recovery.endorse(circleID: circleID))
        #expect(lists.count == 139 && history.latest?.list.members.count == 64)

        let whole = lists.reduce(0) { $0 + $1.encoded.count }
        #expect(whole > SyncLimits.blobBytes, "every list whole: \(whole) bytes")
        let encoded = history.encoded
        #expect(encoded.count < SyncLimits.blobBytes / 4, "\(encoded.count) bytes")
        let read = try CircleHistory(encoded: encoded)
        #expect(read == history)
        #expect(try TrustedDeviceList.verifyingChain(read.lists, circleID: circleID) == lists[lists.count - 1].list)
        #expect(read.keyHoldersGone.isEmpty, "rolled after the last leave")
        #expect(CircleHistory(lists: Array(lists.dropLast()), endorsement: history.endorsement).keyHoldersGone == [devices[4].deviceID])

        // A change the server altered is refused: rebuilt, its list no longer verifies.
        var altered = encoded
        let name = try #require(altered.range(of: Data("device 99 with".utf8)))
        altered[name.lowerBound] = UInt8(ascii: "D")
        let tampered = try CircleHistory(encoded: altered)
        #expect(throws: SyncError.self) { try TrustedDeviceList.verifyingChain(tampered.lists, circleID: circleID) }
    }

    @Test func aHistoryOfWholeListsStillReads() throws {
        let circle = try TestCircle()
        let circleID = try #require(circle.history[0].list.circleID)
        let endorsement = try circle.recoveryKey.endorse(circleID: circleID)
        var writer = CanonicalWriter(domain: CircleHistory.wholeListsDomain)
        writer.append(endorsement.encoded)
        writer.append(UInt64(circle.history.count))
        for list in circle.history { writer.append(list.encoded) }
        #expect(try CircleHistory(encoded: writer.bytes) == CircleHistory(lists: circle.history, endorsement: endorsement))
    }
}
