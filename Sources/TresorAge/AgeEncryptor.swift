import Crypto
import Foundation
import TresorCrypto

/// Writes an age v1 file encrypted to a passphrase, as a stream: the header as soon as it
/// is made, then one sealed 64 KiB chunk at a time, so memory stays at a few chunks whatever
/// the size. Chunks are sealed and handed to `output` on a thread of the encryptor's own
/// (``OrderedWorker``), in order, while the caller prepares the next: `output` must not expect
/// the caller's thread, and its errors surface at the next ``write(_:)`` or at ``finish()``.
/// `age -d` opens the result.
///
/// ```swift
/// var encryptor = try AgeEncryptor(passphrase: Data("correct horse".utf8)) { try handle.write(contentsOf: $0) }
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
    public init(passphrase: Data, workFactor: Int = ScryptStanza.defaultWorkFactor, output: @escaping (Data) throws -> Void) throws {
        try self.init(start: AgeStart(passphrase: passphrase, workFactor: workFactor), output: output)
    }

    /// Starts a file from a start made ahead (``AgeStart``): writes its header and payload nonce.
    /// - Parameters:
    ///   - start: the file's key, header and nonce; one start makes one file.
    ///   - output: Receives the file's bytes in order.
    /// - Throws: Whatever `output` throws.
    public init(start: AgeStart, output: @escaping (Data) throws -> Void) throws {
        try output(start.header)
        let payloadKey = start.payloadKey
        sealer = OrderedWorker<Chunk>.Owner(OrderedWorker { chunk in
            try output(try ChaChaPoly1305.seal(chunk.plaintext, using: payloadKey, nonce: PayloadStream.chunkNonce(chunk.counter, isFinal: chunk.isFinal)))
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
            try sealer.worker.submit(Chunk(plaintext: Data(pending[start..<(start + PayloadStream.chunkByteCount)]), counter: counter, isFinal: false))
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

/// The start of an age file made ahead of writing it: a new file key sealed to the passphrase
/// (the scrypt run, most of a small file's cost), the header and the payload nonce. Apart from
/// ``AgeEncryptor`` so that the KDF can run while the caller does other work — Tresor's backup
/// checks the passcode meanwhile.
public struct AgeStart: Sendable {
    /// The header and the payload nonce, as the file begins.
    let header: Data
    let payloadKey: SymmetricKey

    /// - Parameters:
    ///   - passphrase: The passphrase, UTF-8 encoded; it must not be empty.
    ///   - workFactor: scrypt's `log2(N)`, 1 through ``ScryptStanza/maximumWorkFactor``.
    /// - Throws: ``AgeError`` or a crypto error for bad parameters.
    public init(passphrase: Data, workFactor: Int = ScryptStanza.defaultWorkFactor) throws {
        guard !passphrase.isEmpty else { throw CryptoError.invalidParameter("the passphrase is empty") }
        guard (1...ScryptStanza.maximumWorkFactor).contains(workFactor) else {
            throw AgeError.workFactorTooHigh(workFactor, maximum: ScryptStanza.maximumWorkFactor)
        }
        let fileKey = SymmetricKey(data: SecureRandom.bytes(count: 16))
        let stanza = try ScryptStanza.seal(
            fileKey: fileKey, passphrase: passphrase, workFactor: workFactor,
            salt: SecureRandom.bytes(count: ScryptStanza.saltByteCount))
        let nonce = SecureRandom.bytes(count: PayloadStream.nonceByteCount)
        payloadKey = PayloadStream.key(fileKey: fileKey, nonce: nonce)
        header = try AgeHeader(stanzas: [stanza]).encoded(fileKey: fileKey) + nonce
    }
}
