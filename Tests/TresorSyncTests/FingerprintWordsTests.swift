import Crypto
import Foundation
import Testing

@testable import TresorSync

@Suite("Fingerprint words")
struct FingerprintWordsTests {
    @Test func theWordListIsEFFsLongList() {
        #expect(FingerprintWords.list.count == 7776)
        #expect(Set(FingerprintWords.list).count == 7776)
        #expect(FingerprintWords.list.first == "abacus" && FingerprintWords.list.last == "zoom")
    }

    @Test func knownAnswer() throws {
        let device = try LocalDevice(
            name: "laptop", signingKey: .init(rawRepresentation: Data(repeating: 1, count: 32)),
            agreementKey: .init(rawRepresentation: Data(repeating: 2, count: 32)))
        // Computed with Python (hashlib, `cryptography`, the EFF list) from the same inputs.
        let words = FingerprintWords.words(for: device.identity, nonce: Data(0..<16), circleID: "0123456789abcdef0123456789abcdef")
        #expect(words == ["ambush", "poach", "autistic", "tutu", "tameness", "reburial"])
    }

    @Test func bothDevicesShowTheSameWordsAndAnotherRequestOthers() throws {
        let circle = try TestCircle()
        let circleID = try #require(circle.history[0].list.circleID)
        let joining = try LocalDevice.create(name: "tablet")
        let request = JoinRequest.make(for: joining)
        // What the approving device reads from the server: the identity and nonce only.
        let received = try JSONDecoder().decode(JoinRequest.self, from: try JSONEncoder().encode(request))
        #expect(received == request)
        var object = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(request)) as? [String: Any])
        object["nonce"] = "AAAA"
        let shortNonce = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: SyncError.malformed("a join request's nonce is 16 bytes")) { try JSONDecoder().decode(JoinRequest.self, from: shortNonce) }
        let shown = request.fingerprintWords(circleID: circleID)
        #expect(shown.count == 6)
        #expect(received.fingerprintWords(circleID: circleID) == shown)
        #expect(JoinRequest.make(for: joining).fingerprintWords(circleID: circleID) != shown)
        let impostor = try LocalDevice.create(name: "tablet")
        #expect(JoinRequest(identity: impostor.identity, nonce: request.nonce).fingerprintWords(circleID: circleID) != shown)
        // The server pointed the new device at a circle of its own: the words differ.
        let fake = try TrustedDeviceList.create(account: TestCircle.account, device: try LocalDevice.create(name: "x"), recoveryKey: .generate())
        #expect(request.fingerprintWords(circleID: try #require(fake.list.circleID)) != shown)
    }
}
