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
    /// The payload, read and opened on a thread of its own a few groups of chunks ahead of the
    /// caller (``ReadAhead``): `input` is called from that thread once the header is read.
    private let groups: ReadAhead<[Data]>.Owner
    /// What is left of the group being read, last chunk first.
    private var pending: [Data] = []

    /// Reads and checks the header: the passphrase must open the file key, and the header
    /// MAC must match.
    /// - Parameters:
    ///   - passphrase: The passphrase, UTF-8 encoded.
    ///   - maximumWorkFactor: The largest scrypt work factor accepted (memory is 2^factor KiB).
    ///   - input: Returns up to the requested number of bytes, and empty data at the end.
    /// - Throws: ``AgeError`` saying what is wrong with the file or the passphrase; whatever
    ///   `input` throws.
    public init(passphrase: SecretText, maximumWorkFactor: Int = ScryptStanza.maximumWorkFactor, input: @escaping (Int) throws -> Data) throws {
        var reader = AgeByteReader(source: input)
        let (header, authenticated, mac) = try AgeHeader.read(from: &reader)
        let scrypt = header.stanzas.filter { $0.arguments.first == ScryptStanza.type }
        guard !scrypt.isEmpty else { throw AgeError.notPassphraseEncrypted }
        guard header.stanzas.count == 1 else {
            throw AgeError.malformedHeader("a passphrase (scrypt) stanza must be the header's only stanza")
        }
        let fileKey = try ScryptStanza.open(
            scrypt[0], passphrase: passphrase, maximumWorkFactor: min(maximumWorkFactor, ScryptStanza.maximumWorkFactor))
        guard ConstantTime.equals(AgeHeader.mac(of: authenticated, fileKey: fileKey), mac) else { throw AgeError.headerAltered }
        let nonce = try reader.read(upTo: PayloadStream.nonceByteCount)
        guard nonce.count == PayloadStream.nonceByteCount else { throw AgeError.truncated }
        var payload = PayloadReader(reader: reader, payloadKey: PayloadStream.key(fileKey: fileKey, nonce: nonce))
        groups = ReadAhead<[Data]>.Owner(ReadAhead(name: "tresor-age-read", depth: 4) { try payload.read() })
    }

    /// The next chunk of plaintext (at most 64 KiB), or nil once the final chunk was read and
    /// nothing follows it.
    /// - Throws: ``AgeError/payloadAltered(chunk:)``, ``AgeError/truncated``,
    ///   ``AgeError/trailingData``; whatever `input` throws.
    public mutating func read() throws -> Data? {
        if pending.isEmpty {
            guard let group = try groups.reader.next() else { return nil }
            pending = group.reversed()
        }
        return pending.popLast()
    }
}

/// The payload after the header: sealed chunks read in groups and opened in order, two threads
/// to a group (the chunks are independent), the final one checked.
private struct PayloadReader {
    var reader: AgeByteReader
    let payloadKey: SymmetricKey
    var counter: UInt64 = 0
    var ended = false
    /// What stopped the stream, thrown once the chunks before it were given.
    var failure: (any Error)?

    /// Chunks read and opened at once: one hand-over to the caller per group, not per chunk.
    static let groupChunks = 16

    /// One sealed chunk and where it is in the stream.
    struct Sealed {
        var bytes: Data
        var counter: UInt64
        /// Nothing follows it in the file.
        var isLast: Bool
    }

    /// The next group's plaintext chunks (never empty), or nil after the final chunk. A group
    /// with a bad chunk gives the chunks before it, and the next call the error: the caller
    /// sees every good chunk in order, as if they came one by one.
    mutating func read() throws -> [Data]? {
        if let failure { throw failure }
        guard !ended else { return nil }
        var group: [Sealed] = []
        do {
            while group.count < Self.groupChunks && !ended {
                let sealed = try reader.read(upTo: PayloadStream.sealedChunkByteCount)
                guard !sealed.isEmpty else { throw AgeError.truncated }
                let isLast = try reader.isAtEnd()
                guard isLast || sealed.count == PayloadStream.sealedChunkByteCount else { throw AgeError.payloadAltered(chunk: Int(counter)) }
                group.append(Sealed(bytes: sealed, counter: counter, isLast: isLast))
                counter += 1
                ended = isLast
            }
        } catch {
            failure = error
        }
        let key = payloadKey
        let opened = TwoThreads.map(group) { try Self.open($0, using: key) }
        var plaintexts: [Data] = []
        for result in opened {
            do {
                plaintexts.append(try result.get())
            } catch {
                // This chunk comes before whatever stopped the reading.
                failure = error
                break
            }
        }
        if failure == nil, ended, let last = group.last, plaintexts.last?.isEmpty == true {
            // Only an empty file may end with an empty chunk.
            if last.counter != 0 { failure = AgeError.payloadAltered(chunk: Int(last.counter)) }
            plaintexts.removeLast()
        }
        if let failure, plaintexts.isEmpty { throw failure }
        return plaintexts.isEmpty ? nil : plaintexts
    }

    /// Opens one chunk, telling a cut-off file, trailing bytes and a changed chunk apart.
    static func open(_ sealed: Sealed, using key: SymmetricKey) throws -> Data {
        let index = Int(sealed.counter)
        if sealed.isLast {
            if let plaintext = try? ChaChaPoly1305.open(sealed.bytes, using: key, nonce: PayloadStream.chunkNonce(sealed.counter, isFinal: true)) {
                return plaintext
            }
            // A chunk that opens as a middle one but ends the file: the rest was cut off.
            if (try? ChaChaPoly1305.open(sealed.bytes, using: key, nonce: PayloadStream.chunkNonce(sealed.counter, isFinal: false))) != nil {
                throw AgeError.truncated
            }
            throw AgeError.payloadAltered(chunk: index)
        }
        if let plaintext = try? ChaChaPoly1305.open(sealed.bytes, using: key, nonce: PayloadStream.chunkNonce(sealed.counter, isFinal: false)) {
            return plaintext
        }
        // A full final chunk with more bytes after it.
        if (try? ChaChaPoly1305.open(sealed.bytes, using: key, nonce: PayloadStream.chunkNonce(sealed.counter, isFinal: true))) != nil {
            throw AgeError.trailingData
        }
        throw AgeError.payloadAltered(chunk: index)
    }
}
