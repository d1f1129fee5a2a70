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
        let words = FingerprintWords.words(for: device.identity, nonce: Data(0..<16))
        #expect(words == ["spotter", "cannabis", "swell", "reemerge", "exhume", "distinct"])
    }

    @Test func bothDevicesShowTheSameWordsAndAnotherRequestOthers() throws {
        let joining = try LocalDevice.create(name: "desktop")
        let request = JoinRequest.make(for: joining)
        // What the approving device reads from the server: the identity and nonce only.
        let identity = try JSONDecoder().decode(DeviceIdentity.self, from: try JSONEncoder().encode(request.identity))
        let received = JoinRequest(identity: identity, nonce: request.nonce)
        #expect(request.fingerprintWords.count == 6)
        #expect(received.fingerprintWords == request.fingerprintWords)
        #expect(JoinRequest.make(for: joining).fingerprintWords != request.fingerprintWords)
        let impostor = try LocalDevice.create(name: "desktop")
        #expect(JoinRequest(identity: impostor.identity, nonce: request.nonce).fingerprintWords != request.fingerprintWords)
    }
}
