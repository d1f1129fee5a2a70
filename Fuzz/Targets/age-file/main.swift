// Fuzzes AgeDecryptor (TresorAge), the reader of backup files a user may be handed by anyone.
// Besides "never crash", checks the format's promise: what AgeEncryptor wrote opens to the same
// plaintext, and a changed, cut or extended file never opens to anything.
//
// Input: mode byte | payload
//   mode even: the payload is an age file, opened with the fixed passphrase;
//   mode odd:  the payload is a plaintext: encrypt, decrypt, compare, then alter one byte
//              (chosen by the mode byte), cut the last byte, add one, and expect refusal.
// Work factors are capped at 2 so a file cannot make one input cost seconds of scrypt.
import Foundation
import FuzzSupport
import TresorAge
import TresorCrypto

let passphrase = SecretText("fuzzing passphrase")
let maximumWorkFactor = 2

func decrypt(_ file: Data) throws -> Data {
    try AgeFile.decrypt(file, passphrase: passphrase, maximumWorkFactor: maximumWorkFactor)
}

func seeds() throws -> [String: Data] {
    var seeds: [String: Data] = [:]
    for (name, plaintext) in [("empty", Data()), ("short", Data("secret".utf8)), ("two-chunks", Data(count: 70_000))] {
        seeds["open-\(name)"] = Data([0]) + (try AgeFile.encrypt(plaintext, passphrase: passphrase, workFactor: 1))
        seeds["roundtrip-\(name)"] = Data([1]) + plaintext
    }
    seeds["open-not-age"] = Data([0]) + Data("age-encryption.org/v2\n-> scrypt AAAA 1\n\n--- AAAA\n".utf8)
    return seeds
}

fuzz(seeds: seeds) { data in
    guard let mode = data.first else { return }
    let payload = Data(data.dropFirst())
    if mode % 2 == 0 {
        _ = try? decrypt(payload)
        return
    }
    let file: Data
    do {
        file = try AgeFile.encrypt(payload, passphrase: passphrase, workFactor: 1)
    } catch {
        fuzzFailure("encrypting failed: \(error)")
    }
    guard (try? decrypt(file)) == payload else { fuzzFailure("a file did not decrypt to its plaintext") }
    var altered = file
    let position = (Int(mode) * 131 + payload.count) % altered.count
    altered[position] ^= 1 << (mode % 8)
    if (try? decrypt(altered)) != nil { fuzzFailure("a file with byte \(position) altered still opened") }
    if (try? decrypt(file.dropLast())) != nil { fuzzFailure("a cut file still opened") }
    if (try? decrypt(file + [mode])) != nil { fuzzFailure("an extended file still opened") }
}
