import Crypto
import Foundation
import TresorCrypto

/// Reads an age v1 file encrypted to a passphrase, one authenticated chunk at a time.
///
/// Every chunk returned has passed its tag, but only the last call (returning nil) proves the
/// file was not cut short: a caller that must not act on a truncated file reads to the end
/// first (Tresor's restore stages everything, then commits).
public struct AgeDecryptor {
    private var reader: AgeByteReader
    private let payloadKey: SymmetricKey
    private var counter: UInt64 = 0
    private var ended = false

    /// Reads and checks the header: the passphrase must open the file key, and the header
    /// MAC must match.
    /// - Parameters:
    ///   - passphrase: The passphrase, UTF-8 encoded.
    ///   - maximumWorkFactor: The largest scrypt work factor accepted (memory is 2^factor KiB).
    ///   - input: Returns up to the requested number of bytes, and empty data at the end.
    /// - Throws: ``AgeError`` saying what is wrong with the file or the passphrase; whatever
    ///   `input` throws.
    public init(passphrase: Data, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor, input: @escaping (Int) throws -> Data) throws {
        reader = AgeByteReader(source: input)
        let (header, authenticated, mac) = try AgeHeader.read(from: &reader)
        let scrypt = header.stanzas.filter { $0.arguments.first == ScryptStanza.type }
        guard !scrypt.isEmpty else { throw AgeError.notPassphraseEncrypted }
        guard header.stanzas.count == 1 else {
            throw AgeError.malformedHeader("a passphrase (scrypt) stanza must be the header's only stanza")
        }
        let fileKey = try ScryptStanza.open(scrypt[0], passphrase: passphrase, maximumWorkFactor: min(maximumWorkFactor, ScryptStanza.maximumWorkFactor))
        guard ConstantTime.equals(AgeHeader.mac(of: authenticated, fileKey: fileKey), mac) else { throw AgeError.headerAltered }
        let nonce = try reader.read(upTo: PayloadStream.nonceByteCount)
        guard nonce.count == PayloadStream.nonceByteCount else { throw AgeError.truncated }
        payloadKey = PayloadStream.key(fileKey: fileKey, nonce: nonce)
    }

    /// The next chunk of plaintext (at most 64 KiB), or nil once the final chunk was read and
    /// nothing follows it.
    /// - Throws: ``AgeError/payloadAltered(chunk:)``, ``AgeError/truncated``,
    ///   ``AgeError/trailingData``; whatever `input` throws.
    public mutating func read() throws -> Data? {
        guard !ended else { return nil }
        let sealed = try reader.read(upTo: PayloadStream.sealedChunkByteCount)
        guard !sealed.isEmpty else { throw AgeError.truncated }
        let index = Int(counter)
        if try reader.isAtEnd() {
            ended = true
            if let plaintext = try? ChaChaPoly1305.open(sealed, using: payloadKey, nonce: PayloadStream.chunkNonce(counter, isFinal: true)) {
                // Only an empty file may end with an empty chunk.
                guard !plaintext.isEmpty || counter == 0 else { throw AgeError.payloadAltered(chunk: index) }
                return plaintext.isEmpty ? nil : plaintext
            }
            // A chunk that opens as a middle one but ends the file: the rest was cut off.
            if (try? ChaChaPoly1305.open(sealed, using: payloadKey, nonce: PayloadStream.chunkNonce(counter, isFinal: false))) != nil {
                throw AgeError.truncated
            }
            throw AgeError.payloadAltered(chunk: index)
        }
        guard sealed.count == PayloadStream.sealedChunkByteCount else { throw AgeError.payloadAltered(chunk: index) }
        if let plaintext = try? ChaChaPoly1305.open(sealed, using: payloadKey, nonce: PayloadStream.chunkNonce(counter, isFinal: false)) {
            counter += 1
            return plaintext
        }
        // A full final chunk with more bytes after it.
        if (try? ChaChaPoly1305.open(sealed, using: payloadKey, nonce: PayloadStream.chunkNonce(counter, isFinal: true))) != nil {
            throw AgeError.trailingData
        }
        throw AgeError.payloadAltered(chunk: index)
    }
}
