import Crypto
import Foundation
import TresorCrypto
import TresorSystem

/// Reads an age v1 file encrypted to a passphrase, one authenticated chunk at a time.
///
/// Every chunk returned has passed its tag, but only the last call (returning nil) proves the
/// file was not cut short: a caller that must not act on a truncated file reads to the end
/// first (Tresor's restore stages everything, then commits).
public struct AgeDecryptor {
    /// The payload, read and opened on a thread of its own a few chunks ahead of the caller
    /// (``ReadAhead``): `input` is called from that thread once the header is read.
    private let chunks: ReadAhead<Data>.Owner

    /// Reads and checks the header: the passphrase must open the file key, and the header
    /// MAC must match.
    /// - Parameters:
    ///   - passphrase: The passphrase, UTF-8 encoded.
    ///   - maximumWorkFactor: The largest scrypt work factor accepted (memory is 2^factor KiB).
    ///   - input: Returns up to the requested number of bytes, and empty data at the end.
    /// - Throws: ``AgeError`` saying what is wrong with the file or the passphrase; whatever
    ///   `input` throws.
    public init(passphrase: Data, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor, input: @escaping (Int) throws -> Data) throws {
        var reader = AgeByteReader(source: input)
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
        var payload = PayloadReader(reader: reader, payloadKey: PayloadStream.key(fileKey: fileKey, nonce: nonce))
        chunks = ReadAhead<Data>.Owner(ReadAhead(name: "tresor-age-read") { try payload.read() })
    }

    /// The next chunk of plaintext (at most 64 KiB), or nil once the final chunk was read and
    /// nothing follows it.
    /// - Throws: ``AgeError/payloadAltered(chunk:)``, ``AgeError/truncated``,
    ///   ``AgeError/trailingData``; whatever `input` throws.
    public mutating func read() throws -> Data? {
        try chunks.reader.next()
    }
}

/// The payload after the header: sealed chunks read and opened in order, the final one checked.
private struct PayloadReader {
    var reader: AgeByteReader
    let payloadKey: SymmetricKey
    var counter: UInt64 = 0
    var ended = false

    mutating func read() throws -> Data? {
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
