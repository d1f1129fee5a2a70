// Fuzzes Envelope.open (TresorCrypto), the parser of every stored ciphertext: items, keys,
// notes. Besides "never crash", checks the envelope's promise: what `seal` made opens to the
// same plaintext, and any change to it — a flipped bit anywhere, a truncation, an extension,
// other associated data — is refused.
//
// Input: mode byte | key byte | AAD length n | n bytes of AAD | payload
//   mode % 3 == 0: the payload is an envelope, opened as is (as a slice whose indices do not
//                  start at 0, and again as a fresh Data, which must agree);
//   mode % 3 == 1: the payload is a plaintext: seal, open, compare, then tamper and expect refusal;
//   mode % 3 == 2: the payload is an envelope opened with the AAD and a key of any size.
import Crypto
import Foundation
import FuzzSupport
import TresorCrypto

let keys = [
    SymmetricKey(data: Data((0..<16).map { UInt8($0) })),  // AES-128-GCM
    SymmetricKey(data: Data((0..<32).map { UInt8(0x40 + $0) })),  // AES-256-GCM
]
let oddKeys = [0, 8, 24, 31, 33, 64].map { SymmetricKey(data: Data(repeating: 0x5A, count: $0)) }

func seeds() throws -> [String: Data] {
    var seeds: [String: Data] = [:]
    for (index, key) in keys.enumerated() {
        let bits = key.bitCount
        for (name, plaintext, aad) in [
            ("empty", Data(), Data()), ("secret", Data("s3cr3t".utf8), Data()),
            ("aad", Data("hunter2".utf8), Data("item:genp:42".utf8)),
            ("block", Data(repeating: 0xA5, count: 48), Data("x".utf8)),
        ] {
            let envelope = try Envelope.seal(plaintext, using: key, authenticating: aad)
            seeds["open-aes\(bits)-\(name)"] = Data([0, UInt8(index), UInt8(aad.count)]) + aad + envelope
            seeds["roundtrip-aes\(bits)-\(name)"] = Data([1, UInt8(index), UInt8(aad.count)]) + aad + plaintext
        }
        // Near-valid: a 16-byte IV, a header claiming the other algorithm, a truncated tag.
        var longIV = Data([1, index == 0 ? 1 : 2, 16]) + Data(repeating: 7, count: 16) + Data("ct".utf8)
        longIV += Data(repeating: 0, count: 16)
        seeds["open-aes\(bits)-iv16"] = Data([0, UInt8(index), 0]) + longIV
        var otherAlgorithm = try Envelope.seal(Data("x".utf8), using: key)
        otherAlgorithm[1] = index == 0 ? 2 : 1
        seeds["open-aes\(bits)-other-algorithm"] = Data([0, UInt8(index), 0]) + otherAlgorithm
        let truncated = try Envelope.seal(Data("abc".utf8), using: key).dropLast(3)
        seeds["open-aes\(bits)-truncated"] = Data([2, UInt8(index), 0]) + truncated
    }
    seeds["open-header-only"] = Data([0, 0, 0, 1, 1, 12])
    seeds["open-version-2"] = Data([0, 1, 0, 2, 2, 12]) + Data(repeating: 0, count: 28)
    return seeds
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(data)
    let mode = input.byte() % 3
    let keyByte = input.byte()
    let aad = input.take(Int(input.byte()))
    let payload = input.rest  // a slice: startIndex > 0 whenever the input is not empty

    switch mode {
    case 0:
        let key = keys[Int(keyByte) % keys.count]
        let fromSlice = Result { try Envelope.open(payload, using: key, authenticating: aad) }
        let fromCopy = Result { try Envelope.open(Data(payload), using: key, authenticating: aad) }
        switch (fromSlice, fromCopy) {
        case (.success(let a), .success(let b)) where a == b: break
        case (.failure, .failure): break
        default: fuzzFailure("opening a slice and a copy of the same envelope disagree")
        }
    case 1:
        let key = keys[Int(keyByte) % keys.count]
        let sealed: Data
        do {
            sealed = try Envelope.seal(payload, using: key, authenticating: aad)
        } catch {
            fuzzFailure("seal failed with a valid key: \(error)")
        }
        guard (try? Envelope.open(sealed, using: key, authenticating: aad)) == Data(payload) else {
            fuzzFailure("a sealed envelope did not open to its plaintext")
        }
        // Flip one bit chosen by the key byte and the payload length: header, IV, ciphertext or tag.
        var tampered = sealed
        let position = (Int(keyByte) * 131 + payload.count) % tampered.count
        tampered[position] ^= 1 << (keyByte % 8)
        if (try? Envelope.open(tampered, using: key, authenticating: aad)) != nil {
            fuzzFailure("an envelope with byte \(position) altered still opened")
        }
        if (try? Envelope.open(sealed.dropLast(), using: key, authenticating: aad)) != nil {
            fuzzFailure("a truncated envelope still opened")
        }
        if (try? Envelope.open(sealed + [keyByte], using: key, authenticating: aad)) != nil {
            fuzzFailure("an extended envelope still opened")
        }
        if (try? Envelope.open(sealed, using: key, authenticating: aad + [0])) != nil {
            fuzzFailure("an envelope opened with other associated data")
        }
        let otherKey = keys[(Int(keyByte) + 1) % keys.count]
        if (try? Envelope.open(sealed, using: otherKey, authenticating: aad)) != nil {
            fuzzFailure("an envelope opened with another key")
        }
    default:
        let all = keys + oddKeys
        _ = try? Envelope.open(payload, using: all[Int(keyByte) % all.count], authenticating: aad)
        if let sealed = try? Envelope.seal(payload, using: all[Int(keyByte) % all.count]) {
            guard [16, 32].contains(all[Int(keyByte) % all.count].bitCount / 8) else {
                fuzzFailure("seal accepted a \(all[Int(keyByte) % all.count].bitCount)-bit key")
            }
            _ = sealed
        }
    }
}
