import Crypto
import Foundation
import Testing

@testable import TresorSync

@Suite("The recovery key")
struct RecoveryKeyTests {
    /// Bytes 0…31 as the secret. Text, checksum and keys computed with Python (`base64.b32encode`,
    /// hashlib, `cryptography`'s HKDF, Ed25519 and X25519).
    static let secret = Data(0..<32)
    static let text = "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT-CQKR-MFYY-DENB-WHA5-DYPR-CAW4"

    @Test func knownAnswer() throws {
        let key = RecoveryKey(secret: SymmetricKey(data: Self.secret))
        #expect(key.text == Self.text)
        #expect(key.identity.identity.signingKey.hex == "b72ae61ee5aace226cd955211ddc1f492ee20f11ed6be9e8f7f4714ad914cea7")
        #expect(key.identity.identity.agreementKey.hex == "6ce89312d1efef1e3f131183f0398b9415a8b5f4411e13ed420d961696665c7e")
    }

    @Test func theTypedKeyGivesTheSameIdentity() throws {
        let key = RecoveryKey.generate()
        #expect(key.text.count == 14 * 4 + 13)
        let typed = try RecoveryKey(text: key.text.lowercased().replacingOccurrences(of: "-", with: " "))
        #expect(typed.identity.identity == key.identity.identity)
        #expect(try RecoveryKey(text: Self.text).identity.identity.signingKey.hex.hasPrefix("b72ae61e"))
    }

    @Test func aMistypedKeyIsToldApart() throws {
        var characters = Array(Self.text)
        characters[5] = characters[5] == "A" ? "B" : "A"
        #expect(throws: SyncError.invalidRecoveryKey("the checksum does not match: a character is mistyped")) {
            try RecoveryKey(text: String(characters))
        }
        #expect(throws: SyncError.self) { try RecoveryKey(text: String(Self.text.dropLast())) }
        #expect(throws: SyncError.invalidRecoveryKey("character 1 is not one of A–Z, 2–7")) {
            try RecoveryKey(text: "1" + Self.text.dropFirst())
        }
    }
}
