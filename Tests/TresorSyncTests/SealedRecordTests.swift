import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorSyncProtocol

@testable import TresorSync

@Suite("Sealed records and what a device refuses of a server")
struct SealedRecordTests {
    @Test func aRecordRoundTripsToAnotherDevice() throws {
        let circle = try TestCircle()
        let id = UUID().uuidString
        let first = try circle.seal("password one", by: circle.laptop, sequence: 1, recordID: id)
        let second = try circle.seal("", by: circle.laptop, sequence: 2, recordID: id, baseCounter: 1, tombstone: true)
        #expect(first.deviceID == circle.laptop.deviceID && first.recordID == id && first.deviceSequence == 1 && first.baseCounter == 0)
        #expect(first.body.firstRange(of: Data("password one".utf8)) == nil)
        let keys = try circle.keyring(for: circle.desktop, from: circle.laptop, [circle.epochOne])
        let received = try SyncProgress().applying(page([first, second]), list: circle.list, keys: keys)
        #expect(
            received.records.map(\.content) == [
                RecordContent(payload: Data("password one".utf8)), RecordContent(payload: Data(), isTombstone: true),
            ])
        #expect(received.records.map(\.counter) == [1, 2])
        #expect(received.records[1].baseCounter == 1 && received.records[1].deviceID == circle.laptop.deviceID)
        #expect(received.progress.lastCounter == 2 && received.progress.lastSequence(of: circle.laptop.deviceID) == 2)
        // The caller persists the progress and hands it back.
        let persisted = try JSONDecoder().decode(SyncProgress.self, from: try JSONEncoder().encode(received.progress))
        #expect(persisted == received.progress)
        let third = try circle.seal("password two", by: circle.phone, sequence: 1, recordID: id, baseCounter: 2)
        let next = try persisted.applying(page([third], from: 3), list: circle.list, keys: keys)
        #expect(next.records.first?.content.payload == Data("password two".utf8))
        // And the JSON the server exchanges carries the contract's field names.
        let json = try #require(String(data: try JSONEncoder().encode(page([first])), encoding: .utf8))
        for field in ["counter", "upload", "recordID", "deviceID", "deviceSequence", "baseCounter", "body"] {
            #expect(json.contains("\"\(field)\""))
        }
    }

    @Test func paddingSizesKnownAnswer() throws {
        let sizes: [(payload: Int, padded: Int)] = [
            (0, 256), (1, 256), (251, 256), (252, 512), (507, 512), (508, 1024), (1019, 1024), (1020, 2048), (100_000, 131_072),
            (RecordPadding.maximumSize - 5, RecordPadding.maximumSize),
        ]
        for (payload, padded) in sizes {
            #expect(RecordPadding.paddedSize(payloadCount: payload) == padded, "payload of \(payload) bytes")
        }
        #expect(RecordPadding.paddedSize(payloadCount: RecordPadding.maximumSize - 4) == nil)
        // What the server sees: the same body size for 1 and 251 bytes, another for 252.
        let circle = try TestCircle()
        let id = UUID().uuidString
        func bodySize(_ count: Int) throws -> Int {
            try SealedRecord.seal(
                RecordContent(payload: Data(count: count)), recordID: id, deviceSequence: 1, baseCounter: 0, account: TestCircle.account,
                key: circle.epochOne, device: circle.laptop
            ).body.count
        }
        #expect(try bodySize(1) == bodySize(251))
        #expect(try bodySize(252) == bodySize(251) + 256)
    }

    /// The record format pinned by a vector made with Python (`cryptography`'s HKDF and AES-GCM):
    /// epoch key 0x42 × 32, the fields below, nonce 0…11, the payload padded to 256 bytes.
    @Test func theRecordKeyAndEnvelopeKnownAnswer() throws {
        let fields = SealedRecord.Fields(
            account: "alice@example.com", recordID: "00000000-0000-4000-8000-000000000001", deviceID: "34750f98bd59fcfc946da45aaabe933b",
            deviceSequence: 1, baseCounter: 0, epoch: 1)
        let key = CircleKey(epoch: 1, key: SymmetricKey(data: Data(repeating: 0x42, count: 32)))
        #expect(fields.recordKey(key).withUnsafeBytes { Data($0) }.hex == "33977389c422a86fb6131c011c7e6b7c61fbe289bab35ad5a920a6ea56e40bb1")
        #expect(Digest.sha256(fields.associatedData).hex == "fe0fdb4b77316cd8380ab7495231496bfa6ee0b9b3c29e4fef98daf44b9922a5")
        let envelope = Data(
            hex: """
                01020c000102030405060708090a0bd4a9b2fc6161a3cd8f1c9fe23bc2ad439043dece3a2ca71af97cf78f9ac5702cef6159799e5fab9aeaa820f597e1b5\
                307e8a6da9eac2b0528f029ff524c174f6765f02139907239456de0f97e03351c9df6768493ef9f072a2f2eb4d58e3fe16eac8e324ca2df49b17efeb037c\
                4c8c3d6917193560e64c6cf6585f864e8168506749c31b215ccf2e93722e0a61e2d4e78c09362aa0bcea087c1d6635c1ae6fed89c646548190a30b69e39c\
                322a601c9279436d8c93a7a90a3f517c3021a043273b09fc03d84614a8435b9de0ace8156c96331e9c842a8144dd41dbf97cbf0c60b2a1c74c71acbbcb7b\
                45998f710c6fb05b7b8a41fbaad93a8dc0ee892727007cc6d6bb87573ec4092e40e3b3fc2daa13
                """)
        #expect(envelope.count == 3 + 12 + 256 + 16)
        let record = SealedRecord(fields: fields, envelope: envelope, signature: Data())
        #expect(try record.open(with: key) == RecordContent(payload: Data("correct horse battery staple".utf8)))
    }

    @Test func aRecordThatCannotBeSealedSaysWhy() throws {
        let circle = try TestCircle()
        #expect(throws: SyncError.cannotSeal("the record id is not a UUID")) {
            try circle.seal("x", by: circle.laptop, sequence: 1, recordID: "genp/tresor/service/account")
        }
        #expect(throws: SyncError.cannotSeal("device sequences start at 1")) { try circle.seal("x", by: circle.laptop, sequence: 0) }
        #expect(throws: SyncError.self) {
            try SealedRecord.seal(
                RecordContent(payload: Data(count: RecordPadding.maximumSize)), recordID: UUID().uuidString, deviceSequence: 1, baseCounter: 0,
                account: TestCircle.account, key: circle.epochOne, device: circle.laptop)
        }
    }

    // MARK: The hostile server

    @Test func aForgedSignatureIsRefused() throws {
        let circle = try TestCircle()
        let keys = try circle.keyring(for: circle.desktop, from: circle.laptop, [circle.epochOne])
        let upload = try circle.seal("password", by: circle.laptop, sequence: 1)
        let record = try SealedRecord(body: upload.body)
        // The signature of another record of the laptop's on this one.
        let other = try SealedRecord(body: try circle.seal("other", by: circle.laptop, sequence: 1, recordID: upload.recordID).body)
        var forged = upload
        forged.body = SealedRecord(fields: record.fields, envelope: record.envelope, signature: other.signature).body
        #expect(refusal(of: page([forged]), list: circle.list, keys: keys) == .badSignature(deviceID: circle.laptop.deviceID))
        // A ciphertext bit flipped under the old signature.
        var envelope = record.envelope
        envelope[envelope.count - 1] ^= 1
        forged.body = SealedRecord(fields: record.fields, envelope: envelope, signature: record.signature).body
        #expect(refusal(of: page([forged]), list: circle.list, keys: keys) == .badSignature(deviceID: circle.laptop.deviceID))
    }

    @Test func aRecordOfAnUnknownDeviceIsRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        // Even one sealed under the circle's real key: only the list decides who may write.
        let intruder = try LocalDevice.create(name: "server")
        let upload = try circle.seal("planted", by: intruder, sequence: 1)
        #expect(refusal(of: page([upload]), list: circle.list, keys: keys) == .unknownDevice(deviceID: intruder.deviceID))
        // The recovery identity signs lists, never records.
        let byRecovery = try circle.seal("planted", by: circle.recoveryKey.identity, sequence: 1)
        #expect(
            refusal(of: page([byRecovery]), list: circle.list, keys: keys)
                == .unknownDevice(deviceID: circle.recoveryKey.identity.deviceID))
    }

    @Test func aReplayedRecordIsRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let first = try circle.seal("password", by: circle.laptop, sequence: 1)
        let applied = try SyncProgress().applying(page([first]), list: circle.list, keys: keys).progress
        // Served again later under a new counter.
        #expect(
            refusal(of: page([first], from: 2), after: applied, list: circle.list, keys: keys)
                == .replayed(deviceID: circle.laptop.deviceID, sequence: 1))
        // Or twice in one page.
        #expect(
            refusal(of: page([first, first]), list: circle.list, keys: keys)
                == .replayed(deviceID: circle.laptop.deviceID, sequence: 1))
    }

    @Test func aReorderedPageIsRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let one = try circle.seal("one", by: circle.laptop, sequence: 1), two = try circle.seal("two", by: circle.laptop, sequence: 2)
        #expect(
            refusal(of: page([two, one]), list: circle.list, keys: keys)
                == .sequenceGap(deviceID: circle.laptop.deviceID, expected: 1, found: 2))
        // The server's own counters going back along a page, or behind the last page.
        let backwards = [SyncRecord(counter: 5, upload: one), SyncRecord(counter: 4, upload: two)]
        #expect(refusal(of: backwards, list: circle.list, keys: keys) == .counterOutOfOrder(previous: 5, found: 4))
        let applied = try SyncProgress().applying(page([one], from: 7), list: circle.list, keys: keys).progress
        #expect(refusal(of: page([two], from: 7), after: applied, list: circle.list, keys: keys) == .counterOutOfOrder(previous: 7, found: 7))
    }

    @Test func aDroppedRecordIsRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let uploads = try (1...3).map { try circle.seal("change \($0)", by: circle.laptop, sequence: UInt64($0)) }
        #expect(
            refusal(of: page([uploads[0], uploads[2]]), list: circle.list, keys: keys)
                == .sequenceGap(deviceID: circle.laptop.deviceID, expected: 2, found: 3))
        // Dropped across pages: the next page must start where the last one ended.
        let applied = try SyncProgress().applying(page([uploads[0]]), list: circle.list, keys: keys).progress
        #expect(
            refusal(of: page([uploads[2]], from: 3), after: applied, list: circle.list, keys: keys)
                == .sequenceGap(deviceID: circle.laptop.deviceID, expected: 2, found: 3))
        // Other devices' sequences are their own.
        let desktop = try circle.seal("desktop's", by: circle.desktop, sequence: 1)
        #expect(try SyncProgress().applying(page([uploads[0], desktop, uploads[1]]), list: circle.list, keys: keys).records.count == 3)
    }

    @Test func swappedCiphertextsAreRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let bank = try circle.seal("bank password", by: circle.laptop, sequence: 1)
        let mail = try circle.seal("mail password", by: circle.laptop, sequence: 2)
        var swappedBank = bank, swappedMail = mail
        swappedBank.body = mail.body
        swappedMail.body = bank.body
        #expect(
            refusal(of: page([swappedBank, swappedMail]), list: circle.list, keys: keys)
                == .outerFieldDiffers(field: "record id"))
        // Each outer field is checked against the signed one.
        var moved = bank
        moved.baseCounter = 9
        #expect(refusal(of: page([moved]), list: circle.list, keys: keys) == .outerFieldDiffers(field: "base counter"))
        moved = bank
        moved.deviceID = circle.desktop.deviceID
        #expect(refusal(of: page([moved]), list: circle.list, keys: keys) == .outerFieldDiffers(field: "device id"))
        moved = bank
        moved.deviceSequence = 2
        #expect(refusal(of: page([moved]), list: circle.list, keys: keys) == .outerFieldDiffers(field: "device sequence"))
        // Two records' envelopes swapped inside re-signed bodies: the key and associated data
        // are bound to each record, so the other's ciphertext does not open.
        let bankRecord = try SealedRecord(body: bank.body), mailRecord = try SealedRecord(body: mail.body)
        let unsigned = SealedRecord(fields: bankRecord.fields, envelope: mailRecord.envelope, signature: Data())
        var transplanted = bank
        let resigned = try circle.laptop.sign(unsigned.signedBytes)
        transplanted.body = SealedRecord(fields: bankRecord.fields, envelope: mailRecord.envelope, signature: resigned).body
        #expect(refusal(of: page([transplanted]), list: circle.list, keys: keys) == .notOpened)
    }

    @Test func aRecordOfAnotherEpochOrKeyIsRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        // An epoch the device holds no key of (and its list has not reached).
        let later = try circle.seal("later", by: circle.laptop, sequence: 1, key: CircleKey.generate(epoch: 2))
        #expect(refusal(of: page([later]), list: circle.list, keys: keys) == .unknownEpoch(2))
        // Named epoch 1 but sealed under another key.
        let otherKey = try circle.seal("other", by: circle.laptop, sequence: 1, key: CircleKey(epoch: 1, key: SymmetricKey(size: .bits256)))
        #expect(refusal(of: page([otherKey]), list: circle.list, keys: keys) == .notOpened)
        // A record of another account.
        let foreign = try SealedRecord.seal(
            RecordContent(payload: Data("x".utf8)), recordID: UUID().uuidString, deviceSequence: 1, baseCounter: 0, account: "mallory",
            key: circle.epochOne, device: circle.laptop)
        #expect(refusal(of: page([foreign]), list: circle.list, keys: keys) == .otherAccount("mallory"))
    }

    @Test func aRemovedDevicesRecordsAfterItsRemovalAreRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let before = try circle.seal("before", by: circle.phone, sequence: 1)
        let after = try circle.seal("after", by: circle.phone, sequence: 2)
        let list = try circle.list.accepting(try circle.list.removing(circle.phone.deviceID, lastAcceptedSequence: 1).signed(by: circle.laptop))
        #expect(try SyncProgress().applying(page([before]), list: list, keys: keys).records.count == 1)
        #expect(
            refusal(of: page([before, after]), list: list, keys: keys)
                == .writtenAfterRemoval(deviceID: circle.phone.deviceID, sequence: 2, lastAccepted: 1))
    }

    @Test func afterAKeyRollTheRemovedDeviceOpensNothingNew() throws {
        let circle = try TestCircle()
        let list = try circle.list.accepting(try circle.list.removing(circle.phone.deviceID, lastAcceptedSequence: 0).signed(by: circle.laptop))
        #expect(list.epoch == 2)
        let epochTwo = CircleKey.generate(epoch: 2)
        let shares = try list.keyRecipients.map { try epochTwo.share(to: $0, account: TestCircle.account, from: circle.laptop) }
        #expect(Set(shares.map(\.recipientID)) == [circle.laptop.deviceID, circle.desktop.deviceID, circle.recoveryKey.identity.deviceID])
        let desktopKeys = CircleKeyring([circle.epochOne, try shares[1].open(as: circle.desktop, trusting: list)])
        #expect(desktopKeys.current?.epoch == 2)
        let upload = try circle.seal("new password", by: circle.laptop, sequence: 1, key: epochTwo)
        let received = try SyncProgress().applying(page([upload]), list: list, keys: desktopKeys)
        #expect(received.records.first?.content.payload == Data("new password".utf8))
        // The phone holds epoch 1's key and its old list: the record is of an epoch it has no key of…
        let phoneKeys = CircleKeyring([circle.epochOne])
        #expect(refusal(of: page([upload]), list: circle.list, keys: phoneKeys) == .unknownEpoch(2))
        // …its old key, tried as epoch 2's, does not open it…
        let record = try SealedRecord(body: upload.body)
        #expect(throws: RecordRefusal.notOpened) { try record.open(with: CircleKey(epoch: 2, key: circle.epochOne.key)) }
        // …and no share of the new key opens with its keys.
        for share in shares {
            #expect(throws: SyncError.self) { try share.open(as: circle.phone, trusting: list) }
        }
    }

    @Test func aBadlyPaddedRecordOfATrustedDeviceIsSetApartAndATamperedOneStillRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let valid = try RecordPadding.pad(RecordContent(payload: Data("secret".utf8)))
        var nonZero = valid
        nonZero[nonZero.count - 1] = 1
        var longer = valid
        longer.append(Data(count: 256))
        var flagged = valid
        flagged[0] = 2
        var lengthPastEnd = valid
        lengthPastEnd.replaceSubrange(1..<5, with: [0, 0, 1, 0])
        #expect(throws: RecordRefusal.badPadding) { try RecordPadding.unpad(nonZero) }
        for plaintext in [nonZero, longer, flagged, lengthPastEnd] {
            // Sealed and signed by a trusted device holding the key: only the layout is wrong. The
            // record passes as nothing to read, and the page's next record of that device applies.
            let badlyPadded = try sealRaw(plaintext, circle: circle)
            let next = try circle.seal("next", by: circle.laptop, sequence: 2, recordID: UUID().uuidString)
            let received = try SyncProgress().applying(page([badlyPadded, next]), list: circle.list, keys: keys)
            #expect(received.records.map(\.content) == [.badlyPadded, RecordContent(payload: Data("next".utf8))])
            #expect(received.records[0].content.isBadlyPadded && received.records[0].content.payload.isEmpty)
            #expect(received.progress.lastSequence(of: circle.laptop.deviceID) == 2)

            // The same record with one ciphertext byte changed on the way no longer opens: refused.
            var record = try SealedRecord(body: badlyPadded.body)
            var envelope = record.envelope
            envelope[envelope.count - 20] ^= 1
            record = SealedRecord(fields: record.fields, envelope: envelope, signature: Data())
            let tampered = SealedRecord(fields: record.fields, envelope: envelope, signature: try circle.laptop.sign(record.signedBytes))
            let upload = SyncUpload(
                recordID: badlyPadded.recordID, deviceID: badlyPadded.deviceID, deviceSequence: 1, baseCounter: 0, body: tampered.body)
            #expect(refusal(of: page([upload]), list: circle.list, keys: keys) == .notOpened)
        }
        #expect(
            try SyncProgress().applying(page([try sealRaw(valid, circle: circle)]), list: circle.list, keys: keys).records[0].content.isBadlyPadded
                == false)
    }

    /// Seals `plaintext` as the laptop's first record without padding it.
    func sealRaw(_ plaintext: Data, circle: TestCircle) throws -> SyncUpload {
        let fields = SealedRecord.Fields(
            account: TestCircle.account, recordID: UUID().uuidString, deviceID: circle.laptop.deviceID, deviceSequence: 1, baseCounter: 0, epoch: 1)
        let envelope = try Envelope.seal(plaintext, using: fields.recordKey(circle.epochOne), authenticating: fields.associatedData)
        let unsigned = SealedRecord(fields: fields, envelope: envelope, signature: Data())
        let record = SealedRecord(fields: fields, envelope: envelope, signature: try circle.laptop.sign(unsigned.signedBytes))
        return SyncUpload(recordID: fields.recordID, deviceID: fields.deviceID, deviceSequence: 1, baseCounter: 0, body: record.body)
    }

    @Test func onePageWithARefusedRecordAppliesNothing() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let good = try (1...2).map { try circle.seal("good \($0)", by: circle.laptop, sequence: UInt64($0)) }
        var bad = try circle.seal("bad", by: circle.desktop, sequence: 1)
        bad.body = Data("garbage".utf8)
        let progress = SyncProgress()
        do {
            _ = try progress.applying(page(good + [bad]), list: circle.list, keys: keys)
            Issue.record("a page with a garbage record was accepted")
        } catch SyncError.pageRefused(let counter, let recordID, .malformed) {
            #expect(counter == 3 && recordID == bad.recordID)
        }
        #expect(progress == SyncProgress())
        // The next sync resumes from where the device was.
        #expect(try progress.applying(page(good), list: circle.list, keys: keys).progress.lastCounter == 2)
    }

    @Test func malformedBodiesAreRefused() throws {
        let circle = try TestCircle()
        let keys = CircleKeyring([circle.epochOne])
        let upload = try circle.seal("x", by: circle.laptop, sequence: 1)
        for body in [Data(), upload.body.dropLast(), upload.body + [0], Data(count: SealedRecord.bodyLimit + 1)] {
            var broken = upload
            broken.body = Data(body)
            guard case .malformed = refusal({ _ = try SyncProgress().applying(page([broken]), list: circle.list, keys: keys) }) else {
                Issue.record("a body of \(body.count) bytes was not refused as malformed")
                continue
            }
        }
    }
}
