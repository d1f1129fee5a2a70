import Foundation
import Testing

@testable import TresorSync

@Suite("The signed trusted-device list")
struct TrustedDeviceListTests {
    @Test func aCircleStartsWithItsCreatorAndTheRecoveryIdentity() throws {
        let laptop = try LocalDevice.create(name: "laptop")
        let recovery = RecoveryKey.generate()
        let first = try TrustedDeviceList.create(account: TestCircle.account, device: laptop, recoveryKey: recovery)
        #expect(first.list.version == 1 && first.list.epoch == 1)
        #expect(first.list.members == [laptop.identity])
        #expect(first.list.recovery == recovery.identity.identity)
        #expect(first.signerID == laptop.deviceID)
        let circleID = try #require(first.list.circleID)
        #expect(circleID.count == 32)
        #expect(try TrustedDeviceList.verifyingChain([first], circleID: circleID) == first.list)
        // What the server stores reads back the same, and is still accepted.
        let stored = try SignedTrustedDeviceList(encoded: first.encoded)
        #expect(stored == first)
        #expect(try TrustedDeviceList.verifyingChain([stored], circleID: circleID) == first.list)
        #expect(try first.list.adding(try LocalDevice.create(name: "desktop").identity).circleID == nil)
    }

    @Test func eachDeviceFollowsTheListsItsMembersSign() throws {
        let circle = try TestCircle()
        #expect(circle.list.version == 3)
        #expect(circle.list.members.map(\.name) == ["laptop", "desktop", "phone"])
        // The phone joins with the circle's lists from the first, checked against the circle id
        // its fingerprint words were made with.
        let circleID = try #require(circle.history[0].list.circleID)
        #expect(try TrustedDeviceList.verifyingChain(circle.history, circleID: circleID) == circle.list)
        // A version may be skipped when a member of the list before signed the next: the
        // laptop (in version 1) did not sign version 3, the desktop (added by version 2) did.
        #expect(throws: SyncError.listSignerNotTrusted(signerID: circle.desktop.deviceID)) {
            try TrustedDeviceList.verifyingChain([circle.history[0], circle.history[2]], circleID: circleID)
        }
        #expect(throws: SyncError.invalidList("no list")) { try TrustedDeviceList.verifyingChain([], circleID: circleID) }
        #expect(throws: SyncError.invalidList("the first list is version 2")) {
            try TrustedDeviceList.verifyingChain(Array(circle.history.dropFirst()), circleID: circleID)
        }
    }

    @Test func aListSignedByNoTrustedDeviceIsRefused() throws {
        let circle = try TestCircle()
        // The server makes a device of its own and a list adding it, signed by that device.
        let intruder = try LocalDevice.create(name: "server's device")
        let forged = try circle.list.adding(intruder.identity).signed(by: intruder)
        #expect(throws: SyncError.listSignerNotTrusted(signerID: intruder.deviceID)) { try circle.list.accepting(forged) }
        // A device only in the offered list cannot vouch for it either.
        let selfVouched = try TrustedDeviceList(
            account: TestCircle.account, version: 4, epoch: 1, members: [intruder.identity], recovery: circle.list.recovery, removed: [])
        #expect(throws: SyncError.listSignerNotTrusted(signerID: intruder.deviceID)) {
            try circle.list.accepting(try selfVouched.signed(by: intruder))
        }
        // Nor to a joining device: a circle of the server's own, its device the creator and the
        // tablet added, is not the circle whose id the words were compared with.
        let tablet = try LocalDevice.create(name: "tablet")
        let fakeFirst = try TrustedDeviceList.create(account: TestCircle.account, device: intruder, recoveryKey: circle.recoveryKey)
        let fakeChain = [fakeFirst, try fakeFirst.list.adding(tablet.identity).signed(by: intruder)]
        let circleID = try #require(circle.history[0].list.circleID)
        #expect(throws: SyncError.otherCircle(expected: circleID, found: try #require(fakeFirst.list.circleID))) {
            try TrustedDeviceList.verifyingChain(fakeChain, circleID: circleID)
        }
        // The real first list re-signed by another device, or followed by a list no member signed.
        let resigned = SignedTrustedDeviceList(
            list: circle.history[0].list, signerID: intruder.deviceID, signature: try intruder.sign(circle.history[0].list.signedBytes))
        #expect(throws: SyncError.invalidList("the first list is not signed by the device that created the circle")) {
            try TrustedDeviceList.verifyingChain([resigned], circleID: circleID)
        }
        let forgedSecond = try circle.history[0].list.adding(tablet.identity).signed(by: tablet)
        #expect(throws: SyncError.listSignerNotTrusted(signerID: tablet.deviceID)) {
            try TrustedDeviceList.verifyingChain([circle.history[0], forgedSecond], circleID: circleID)
        }
    }

    @Test func aForgedSignatureIsRefused() throws {
        let circle = try TestCircle()
        let intruder = try LocalDevice.create(name: "server's device")
        let honest = try circle.list.adding(intruder.identity).signed(by: circle.laptop)
        // The signature of another list (here: the laptop's on version 4 without the intruder)
        // attached to the list adding the intruder, still naming the laptop as signer.
        let other = try TrustedDeviceList(
            account: TestCircle.account, version: 4, epoch: 1, members: circle.list.members, recovery: circle.list.recovery, removed: [])
        let otherSigned = try other.signed(by: circle.laptop)
        let forged = SignedTrustedDeviceList(list: honest.list, signerID: circle.laptop.deviceID, signature: otherSigned.signature)
        #expect(throws: SyncError.badSignature(signerID: circle.laptop.deviceID)) { try circle.list.accepting(forged) }
        // The bytes altered after signing: one bit of the stored list.
        var bytes = otherSigned.encoded
        let name = try #require(bytes.firstRange(of: Data("phone".utf8)))
        bytes[name.lowerBound] = UInt8(ascii: "P")
        #expect(throws: SyncError.badSignature(signerID: circle.laptop.deviceID)) {
            try circle.list.accepting(try SignedTrustedDeviceList(encoded: bytes))
        }
        #expect(try circle.list.accepting(honest).members.last == intruder.identity, "the laptop may add a device")
    }

    @Test func anOlderOrEqualVersionIsARollback() throws {
        let circle = try TestCircle()
        #expect(throws: SyncError.listRollback(heldVersion: 3, offeredVersion: 2)) { try circle.list.accepting(circle.history[1]) }
        #expect(throws: SyncError.listRollback(heldVersion: 3, offeredVersion: 3)) { try circle.list.accepting(circle.history[2]) }
        // A later list with the removal undone by replaying an old one: refused the same way.
        let removed = try circle.list.accepting(try circle.list.removing(circle.phone.deviceID, lastAcceptedSequence: 0).signed(by: circle.laptop))
        #expect(throws: SyncError.listRollback(heldVersion: 4, offeredVersion: 3)) { try removed.accepting(circle.history[2]) }
    }

    @Test func aListOfAnotherAccountIsRefused() throws {
        let circle = try TestCircle()
        let other = try TrustedDeviceList(
            account: "mallory", version: 4, epoch: 1, members: circle.list.members, recovery: circle.list.recovery, removed: [])
        #expect(throws: SyncError.otherAccount(expected: TestCircle.account, found: "mallory")) {
            try circle.list.accepting(try other.signed(by: circle.laptop))
        }
    }

    @Test func aRemovedDeviceCannotSignTheNextList() throws {
        let circle = try TestCircle()
        let removal = try circle.list.removing(circle.phone.deviceID, lastAcceptedSequence: 7).signed(by: circle.desktop)
        let afterRemoval = try circle.list.accepting(removal)
        #expect(afterRemoval.epoch == 2)
        #expect(afterRemoval.removed == [RemovedDevice(identity: circle.phone.identity, lastAcceptedSequence: 7)])
        let comeback = try TrustedDeviceList(
            account: TestCircle.account, version: 5, epoch: 2, members: afterRemoval.members + [circle.phone.identity],
            recovery: afterRemoval.recovery, removed: [])
        let signed = SignedTrustedDeviceList(list: comeback, signerID: circle.phone.deviceID, signature: try circle.phone.sign(comeback.signedBytes))
        #expect(throws: SyncError.listSignerNotTrusted(signerID: circle.phone.deviceID)) { try afterRemoval.accepting(signed) }
    }

    @Test func aLeavingDeviceSignsTheListWithoutItselfAndCannotComeBack() throws {
        let circle = try TestCircle()
        let departure = try circle.list.leaving(circle.phone, lastAcceptedSequence: 3)
        // Another member accepts it: the signer is a member of the list it holds.
        let afterLeaving = try circle.list.accepting(departure)
        #expect(afterLeaving.member(circle.phone.deviceID) == nil && afterLeaving.epoch == circle.list.epoch)
        #expect(afterLeaving.removed == [RemovedDevice(identity: circle.phone.identity, lastAcceptedSequence: 3)])
        // Gone, it signs nothing more.
        #expect(throws: SyncError.notAMember(deviceID: circle.phone.deviceID)) {
            try afterLeaving.leaving(circle.phone, lastAcceptedSequence: 4)
        }
        let comeback = try afterLeaving.adding(LocalDevice.create(name: "phone's friend").identity)
        let signed = SignedTrustedDeviceList(list: comeback, signerID: circle.phone.deviceID, signature: try circle.phone.sign(comeback.signedBytes))
        #expect(throws: SyncError.listSignerNotTrusted(signerID: circle.phone.deviceID)) { try afterLeaving.accepting(signed) }
    }

    @Test func theRecoveryKeyAddsADeviceWhenNoneIsLeft() throws {
        let circle = try TestCircle()
        let newMachine = try LocalDevice.create(name: "new laptop")
        // Made when the circle was created, kept by the server.
        let endorsement = try circle.recoveryKey.endorse(circleID: try #require(circle.history[0].list.circleID))
        // The new machine reads the circle's lists and the endorsement from the server.
        let served = try circle.history.map { try SignedTrustedDeviceList(encoded: $0.encoded) }
        let typed = try RecoveryKey(text: circle.recoveryKey.text)
        let stored = try RecoveryEndorsement(encoded: endorsement.encoded)
        let base = try TrustedDeviceList.verifyingChain(served, recoveryKey: typed, endorsement: stored)
        #expect(base == circle.list)
        let recovered = try base.adding(newMachine.identity).signed(by: typed.identity)
        #expect(recovered.signerID == circle.recoveryKey.identity.deviceID)
        #expect(recovered.list.members.last == newMachine.identity)
        // A device of the circle still running accepts it too.
        #expect(try circle.list.accepting(recovered).version == 4)
        // Another recovery key is not this circle's.
        let other = RecoveryKey.generate()
        #expect(throws: SyncError.invalidRecoveryKey("the circle's endorsement is not signed by this recovery key")) {
            try TrustedDeviceList.verifyingChain(served, recoveryKey: other, endorsement: endorsement)
        }
        #expect(throws: SyncError.notAMember(deviceID: other.identity.deviceID)) { try base.adding(newMachine.identity).signed(by: other.identity) }
    }

    @Test func aRecoveringDeviceRefusesACircleTheServerMade() throws {
        let circle = try TestCircle()
        let endorsement = try circle.recoveryKey.endorse(circleID: try #require(circle.history[0].list.circleID))
        // The server's own circle naming the real recovery identity, its own device the creator.
        let intruder = try LocalDevice.create(name: "server's device")
        let fake = try TrustedDeviceList.create(account: TestCircle.account, device: intruder, recoveryKey: circle.recoveryKey)
        #expect(fake.list.recovery == circle.list.recovery)
        #expect(throws: SyncError.otherCircle(expected: endorsement.circleID, found: try #require(fake.list.circleID))) {
            try TrustedDeviceList.verifyingChain([fake], recoveryKey: circle.recoveryKey, endorsement: endorsement)
        }
        // Nor can it endorse its circle: that takes the recovery key.
        let fakeID = try #require(fake.list.circleID)
        let forged = RecoveryEndorsement(circleID: fakeID, signature: try intruder.sign(RecoveryEndorsement.signedBytes(circleID: fakeID)))
        #expect(throws: SyncError.invalidRecoveryKey("the circle's endorsement is not signed by this recovery key")) {
            try TrustedDeviceList.verifyingChain([fake], recoveryKey: circle.recoveryKey, endorsement: forged)
        }
    }

    @Test func aListBreakingItsRulesIsRefused() throws {
        let circle = try TestCircle()
        let laptop = circle.laptop.identity, recovery = circle.list.recovery
        func list(
            account: String = "a", version: UInt64 = 1, members: [DeviceIdentity], recovery: DeviceIdentity, removed: [RemovedDevice] = []
        ) throws -> TrustedDeviceList {
            try TrustedDeviceList(account: account, version: version, epoch: 1, members: members, recovery: recovery, removed: removed)
        }
        #expect(throws: SyncError.invalidList("0 members (1 to 1000)")) { try list(members: [], recovery: recovery) }
        #expect(throws: SyncError.invalidList("a device is listed twice")) { try list(members: [laptop, laptop], recovery: recovery) }
        #expect(throws: SyncError.invalidList("no account name")) { try list(account: "", members: [laptop], recovery: recovery) }
        #expect(throws: SyncError.invalidList("version and epoch start at 1")) { try list(version: 0, members: [laptop], recovery: recovery) }
        #expect(throws: SyncError.invalidList("the recovery identity is listed as a device")) { try list(members: [laptop], recovery: laptop) }
        #expect(throws: SyncError.invalidList("a removed device is listed twice or still a member")) {
            try list(members: [laptop], recovery: recovery, removed: [.init(identity: laptop, lastAcceptedSequence: 0)])
        }
        #expect(throws: SyncError.self) { try circle.list.adding(circle.phone.identity) }
        // An epoch going back, though signed by a member and of a higher version.
        let rolled = try circle.list.accepting(try circle.list.removing(circle.phone.deviceID, lastAcceptedSequence: 0).signed(by: circle.laptop))
        let back = try TrustedDeviceList(
            account: TestCircle.account, version: 5, epoch: 1, members: rolled.members, recovery: recovery, removed: rolled.removed)
        #expect(throws: SyncError.invalidList("its epoch 1 is below the held 2")) { try rolled.accepting(try back.signed(by: circle.laptop)) }
        // Garbage from the server.
        #expect(throws: SyncError.self) { try SignedTrustedDeviceList(encoded: Data("not a list".utf8)) }
        #expect(throws: SyncError.self) { try SignedTrustedDeviceList(encoded: circle.history[0].encoded.dropLast()) }
        #expect(throws: SyncError.self) { try SignedTrustedDeviceList(encoded: circle.history[0].encoded + [0]) }
    }
}
