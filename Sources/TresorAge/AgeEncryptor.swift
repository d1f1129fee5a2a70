import Crypto
import Foundation
import TresorCrypto
import TresorSystem

/// Writes an age v1 file encrypted to a passphrase, as a stream: the header as soon as it
/// is made (or, with ``init(payloadOf:output:)``, apart by the caller), then one sealed 64 KiB
/// chunk at a time, so memory stays at a few chunks whatever the size. Chunks are sealed and
/// handed to `output` on a thread of the encryptor's own (``OrderedWorker``), in order, while
/// the caller prepares the next: `output` must not expect
/// the caller's thread, and its errors surface at the next ``write(_:)`` or at ``finish()``.
/// `age -d` opens the result.
///
/// ```swift
/// var encryptor = try AgeEncryptor(passphrase: SecretText("correct horse")) { try handle.write(contentsOf: $0) }
/// try encryptor.write(records)
/// try encryptor.finish()
/// ```
public struct AgeEncryptor {
    private let sealer: OrderedWorker<Chunk>.Owner
    private var pending = Data()
    private var counter: UInt64 = 0
    private var finished = false

    /// Starts a file and writes its header and payload nonce.
    /// - Parameters:
    ///   - passphrase: The passphrase, UTF-8 encoded; it must not be empty.
    ///   - workFactor: scrypt's `log2(N)`, 1 through ``ScryptStanza/maximumWorkFactor``.
    ///   - output: Receives the file's bytes in order.
    /// - Throws: ``AgeError`` or a crypto error for bad parameters; whatever `output` throws.
    public init(passphrase: SecretText, workFactor: Int = ScryptStanza.defaultWorkFactor, output: @escaping (Data) throws -> Void) throws {
        let key = try AgeFileKey(workFactor: workFactor)
        try output(try key.header(passphrase: passphrase))
        self.init(payloadOf: key, output: output)
    }

    /// Writes only the payload of a file whose header is written apart: the caller puts
    /// `key.header(passphrase:)` — ``AgeFileKey/headerByteCount`` bytes — before it, so the KDF
    /// can run while the payload is written.
    /// - Parameters:
    ///   - key: the file's key; one key makes one file.
    ///   - output: Receives the payload's bytes in order.
    public init(payloadOf key: AgeFileKey, output: @escaping (Data) throws -> Void) {
        let payloadKey = key.payloadKey
        sealer = OrderedWorker<Chunk>.Owner(
            OrderedWorker(name: "tresor-age-seal") { chunk in
                try output(
                    try ChaChaPoly1305.seal(
                        chunk.plaintext, using: payloadKey, nonce: PayloadStream.chunkNonce(chunk.counter, isFinal: chunk.isFinal)))
            })
    }

    /// A chunk of plaintext and its place in the payload.
    struct Chunk {
        var plaintext: Data
        var counter: UInt64
        var isFinal: Bool
    }

    /// Adds `bytes` to the payload. Full chunks are sealed and written; the rest waits.
    /// - Parameter bytes: Plaintext, in any sizes.
    /// - Throws: Whatever `output` throws; a programming error after ``finish()``.
    public mutating func write<Bytes: DataProtocol>(_ bytes: Bytes) throws {
        precondition(!finished, "AgeEncryptor.write after finish")
        pending.append(contentsOf: bytes)
        // A chunk is written only once more follows it: the final one must carry the final flag.
        var start = pending.startIndex
        while pending.endIndex - start > PayloadStream.chunkByteCount {
            try sealer.worker.submit(
                Chunk(plaintext: Data(pending[start..<(start + PayloadStream.chunkByteCount)]), counter: counter, isFinal: false))
            counter += 1
            start += PayloadStream.chunkByteCount
        }
        // What is left is copied once, however many chunks a large write held.
        if start != pending.startIndex { pending = Data(pending[start...]) }
    }

    /// Seals and writes the final chunk. The file is complete only after this.
    /// - Throws: Whatever `output` throws.
    public mutating func finish() throws {
        precondition(!finished, "AgeEncryptor.finish twice")
        finished = true
        try sealer.worker.submit(Chunk(plaintext: pending, counter: counter, isFinal: true))
        pending = Data()
        try sealer.worker.finish()
    }
}

/// An age file's key, made at once, and its header, made apart: the header seals the file key
/// to the passphrase (the scrypt run, most of a small file's cost) and authenticates itself with
/// the file key, while the payload needs only the file key — so the payload can be sealed and
/// written while the KDF runs (Tresor's backup does), and the header put before it once known.
public struct AgeFileKey: Sendable {
    let fileKey: SymmetricKey
    /// The payload nonce, written after the header.
    let nonce: Data
    /// scrypt's `log2(N)` for the header.
    public let workFactor: Int

    /// A new random file key and payload nonce.
    /// - Parameter workFactor: scrypt's `log2(N)`, 1 through ``ScryptStanza/maximumWorkFactor``.
    /// - Throws: ``AgeError/workFactorTooHigh(_:maximum:)`` or a crypto error for a bad work factor.
    public init(workFactor: Int = ScryptStanza.defaultWorkFactor) throws {
        guard (1...ScryptStanza.maximumWorkFactor).contains(workFactor) else {
            throw AgeError.workFactorTooHigh(workFactor, maximum: ScryptStanza.maximumWorkFactor)
        }
        self.workFactor = workFactor
        fileKey = SymmetricKey(data: SecureRandom.bytes(count: 16))
        nonce = SecureRandom.bytes(count: PayloadStream.nonceByteCount)
    }

    var payloadKey: SymmetricKey { PayloadStream.key(fileKey: fileKey, nonce: nonce) }

    /// The file's bytes before the payload: the header with the file key sealed to
    /// `passphrase` under a new salt, and the payload nonce. Runs scrypt.
    /// - Parameter passphrase: The passphrase, UTF-8 encoded; it must not be empty.
    /// - Returns: ``headerByteCount`` bytes.
    /// - Throws: a crypto error for an empty passphrase.
    public func header(passphrase: SecretText) throws -> Data {
        guard passphrase.byteCount > 0 else { throw CryptoError.invalidParameter("the passphrase is empty") }
        let stanza = try ScryptStanza.seal(
            fileKey: fileKey, passphrase: passphrase, workFactor: workFactor, salt: SecureRandom.bytes(count: ScryptStanza.saltByteCount))
        return AgeHeader(stanzas: [stanza]).encoded(fileKey: fileKey) + nonce
    }

    /// How many bytes ``header(passphrase:)`` returns, known before the KDF runs: a scrypt
    /// stanza's salt and body have fixed sizes.
    public var headerByteCount: Int {
        let stanza = AgeStanza(
            arguments: [ScryptStanza.type, AgeBase64.encode(Data(count: ScryptStanza.saltByteCount)), String(workFactor)],
            body: Data(count: ScryptStanza.fileKeyBodyByteCount))
        return AgeHeader(stanzas: [stanza]).encoded(fileKey: fileKey).count + nonce.count
    }
}
