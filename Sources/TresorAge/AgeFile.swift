import Foundation
import TresorCrypto

/// Whole-buffer age encryption for small payloads; streams use ``AgeEncryptor`` and
/// ``AgeDecryptor``.
public enum AgeFile {
    /// An age v1 file of `plaintext`, encrypted to `passphrase`.
    /// - Parameters:
    ///   - plaintext: The bytes to encrypt.
    ///   - passphrase: The passphrase, UTF-8 encoded; not empty.
    ///   - workFactor: scrypt's `log2(N)`.
    /// - Returns: The file's bytes.
    /// - Throws: ``AgeError`` or a crypto error for bad parameters.
    public static func encrypt(_ plaintext: Data, passphrase: SecretText, workFactor: Int = ScryptStanza.defaultWorkFactor) throws -> Data {
        var file = Data()
        var encryptor = try AgeEncryptor(passphrase: passphrase, workFactor: workFactor) { file += $0 }
        try encryptor.write(plaintext)
        try encryptor.finish()
        return file
    }

    /// The plaintext of an age v1 file encrypted to `passphrase`, read to its authenticated end.
    /// - Parameters:
    ///   - file: The file's bytes.
    ///   - passphrase: The passphrase, UTF-8 encoded.
    ///   - maximumWorkFactor: The largest scrypt work factor accepted.
    /// - Returns: The plaintext.
    /// - Throws: ``AgeError`` saying what is wrong with the file or the passphrase.
    public static func decrypt(_ file: Data, passphrase: SecretText, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor) throws -> Data {
        var remaining = file[...]
        var decryptor = try AgeDecryptor(passphrase: passphrase, maximumWorkFactor: maximumWorkFactor) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
        var plaintext = Data()
        while let chunk = try decryptor.read() { plaintext += chunk }
        return plaintext
    }
}
