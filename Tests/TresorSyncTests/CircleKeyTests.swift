import Crypto
import Foundation
import Testing

@testable import TresorSync

@Suite("Circle keys shared by HPKE")
struct CircleKeyTests {
    @Test func eachDeviceOpensTheShareMadeForIt() throws {
        let circle = try TestCircle()
        let share = try circle.epochOne.share(to: circle.desktop.identity, account: TestCircle.account, from: circle.laptop)
        let stored = try CircleKeyShare(encoded: share.encoded)
        #expect(stored == share)
        let opened = try stored.open(as: circle.desktop, trusting: circle.list)
        #expect(opened.epoch == 1)
        #expect(opened.key == circle.epochOne.key)
        // The recovery identity receives it too.
        let toRecovery = try circle.epochOne.share(to: circle.list.recovery, account: TestCircle.account, from: circle.laptop)
        #expect(try toRecovery.open(as: circle.recoveryKey.identity, trusting: circle.list).key == circle.epochOne.key)
    }

    @Test func aShareForAnotherDeviceDoesNotOpen() throws {
        let circle = try TestCircle()
        let share = try circle.epochOne.share(to: circle.desktop.identity, account: TestCircle.account, from: circle.laptop)
        #expect(throws: SyncError.shareForAnotherDevice(recipientID: circle.desktop.deviceID)) {
            try share.open(as: circle.phone, trusting: circle.list)
        }
        // Relabelled for the phone by the server: its signature no longer covers it.
        let relabelled = CircleKeyShare(
            account: share.account, epoch: 1, recipientID: circle.phone.deviceID, senderID: share.senderID,
            encapsulatedKey: share.encapsulatedKey, ciphertext: share.ciphertext, signature: share.signature)
        #expect(throws: SyncError.badSignature(signerID: circle.laptop.deviceID)) { try relabelled.open(as: circle.phone, trusting: circle.list) }
    }

    @Test func aKeyTheServerMadeIsRefused() throws {
        let circle = try TestCircle()
        // Anyone can encrypt to a public key: the server seals a key of its own to the desktop.
        let intruder = try LocalDevice.create(name: "server")
        let planted = try CircleKey.generate(epoch: 1).share(to: circle.desktop.identity, account: TestCircle.account, from: intruder)
        #expect(throws: SyncError.shareSenderNotTrusted(senderID: intruder.deviceID)) { try planted.open(as: circle.desktop, trusting: circle.list) }
        // Or claims the laptop sent it.
        let claimed = CircleKeyShare(
            account: planted.account, epoch: 1, recipientID: planted.recipientID, senderID: circle.laptop.deviceID,
            encapsulatedKey: planted.encapsulatedKey, ciphertext: planted.ciphertext, signature: planted.signature)
        #expect(throws: SyncError.badSignature(signerID: circle.laptop.deviceID)) { try claimed.open(as: circle.desktop, trusting: circle.list) }
    }

    @Test func aShareForAnEpochTheListHasNotReachedIsRefused() throws {
        let circle = try TestCircle()
        let early = try CircleKey.generate(epoch: 2).share(to: circle.desktop.identity, account: TestCircle.account, from: circle.laptop)
        #expect(throws: SyncError.shareForFutureEpoch(epoch: 2, listEpoch: 1)) { try early.open(as: circle.desktop, trusting: circle.list) }
    }

    @Test func anAlteredShareDoesNotOpen() throws {
        let circle = try TestCircle()
        let share = try circle.epochOne.share(to: circle.desktop.identity, account: TestCircle.account, from: circle.laptop)
        var ciphertext = share.ciphertext
        ciphertext[0] ^= 1
        var altered = CircleKeyShare(
            account: share.account, epoch: 1, recipientID: share.recipientID, senderID: share.senderID,
            encapsulatedKey: share.encapsulatedKey, ciphertext: ciphertext, signature: Data())
        // Re-signed by the laptop, so only HPKE's authentication stands in the way.
        altered.signature = try circle.laptop.sign(altered.signedBytes)
        #expect(throws: SyncError.shareNotOpened) { try altered.open(as: circle.desktop, trusting: circle.list) }
        #expect(throws: SyncError.self) { try CircleKeyShare(encoded: share.encoded.dropLast()) }
    }

    @Test func theKeyringSealsWithTheNewestEpoch() {
        let keyring = CircleKeyring([CircleKey.generate(epoch: 2), CircleKey.generate(epoch: 1), CircleKey.generate(epoch: 3)])
        #expect(keyring.current?.epoch == 3)
        #expect(keyring.epochs == [1, 2, 3])
        #expect(keyring.key(for: 4) == nil)
        #expect(CircleKeyring().current == nil)
    }

    /// RFC 9180, Appendix A.2.1: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20Poly1305,
    /// base mode — the suite circle keys are shared with. swift-crypto's sender draws its own
    /// ephemeral key (no API takes one), so the vector is checked on the recipient's side:
    /// from skRm and enc, the first two ciphertexts open to the vector's plaintext.
    @Test func hpkeOpensRFC9180Vectors() throws {
        let recipient = try Curve25519.KeyAgreement.PrivateKey(
            rawRepresentation: Data(hex: "8057991eef8f1f1af18f4a9491d16a1ce333f695d4db8e38da75975c4478e0fb"))
        #expect(recipient.publicKey.rawRepresentation.hex == "4310ee97d88cc1f088a5576c77ab0cf5c3ac797f3d95139c6c84b5429c59662a")
        var context = try HPKE.Recipient(
            privateKey: recipient, ciphersuite: CircleKey.ciphersuite, info: Data(hex: "4f6465206f6e2061204772656369616e2055726e"),
            encapsulatedKey: Data(hex: "1afa08d3dec047a643885163f1180476fa7ddb54c6a8029ea33f95796bf2ac4a"))
        let plaintext = Data(hex: "4265617574792069732074727574682c20747275746820626561757479")
        let first = try context.open(
            Data(hex: "1c5250d8034ec2b784ba2cfd69dbdb8af406cfe3ff938e131f0def8c8b60b4db21993c62ce81883d2dd1b51a28"),
            authenticating: Data(hex: "436f756e742d30"))
        #expect(first == plaintext)
        let second = try context.open(
            Data(hex: "6b53c051e4199c518de79594e1c4ab18b96f081549d45ce015be002090bb119e85285337cc95ba5f59992dc98c"),
            authenticating: Data(hex: "436f756e742d31"))
        #expect(second == plaintext)
        let exporter = try context.exportSecret(context: Data(), outputByteCount: 32)
        #expect(exporter.withUnsafeBytes { Data($0) }.hex == "4bbd6243b8bb54cec311fac9df81841b6fd61f56538a775e7c80a9f40160606e")
    }
}
