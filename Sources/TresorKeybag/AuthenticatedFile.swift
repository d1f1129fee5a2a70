import Crypto
import Foundation
import TresorCrypto
import TresorModel
import TresorSystem

/// A small JSON file protected against tampering by an HMAC under a device-key subkey.
/// Layout (docs/FORMAT.md): magic (4 bytes) | version (1 byte) | HMAC-SHA256 (32 bytes) | JSON.
/// The MAC covers magic, version and JSON.
struct AuthenticatedFile<Payload: Codable> {
    let magic: Data
    let version: UInt8
    let name: String
    let macKey: SymmetricKey

    static var sizeLimit: Int { 1 << 20 }

    func encode(_ payload: Payload) throws -> Data {
        let json = try JSONStyle.secondsSince1970.encoder.encode(payload)
        let header = magic + [version]
        return header + MessageAuthentication.hmacSHA256(header + json, key: macKey) + json
    }

    func decode(_ bytes: Data) throws -> Payload {
        let headerCount = magic.count + 1
        guard bytes.count > headerCount + 32 else {
            throw KeybagError.fileCorrupted(file: name, reason: "truncated to \(bytes.count) bytes")
        }
        let bytes = Data(bytes)
        guard bytes.prefix(magic.count) == magic else {
            throw KeybagError.fileCorrupted(file: name, reason: "not a Tresor \(name) file")
        }
        guard bytes[magic.count] == version else { throw KeybagError.unsupportedVersion(Int(bytes[magic.count])) }
        let header = bytes.prefix(headerCount)
        let mac = bytes[headerCount..<headerCount + 32]
        let json = bytes[(headerCount + 32)...]
        guard MessageAuthentication.isValidHMACSHA256(mac, for: header + json, key: macKey) else {
            throw KeybagError.fileCorrupted(
                file: name, reason: "integrity check failed: altered, truncated, or made with another device key")
        }
        do {
            return try JSONStyle.secondsSince1970.decoder.decode(Payload.self, from: json)
        } catch {
            throw KeybagError.fileCorrupted(file: name, reason: "unreadable content")
        }
    }

    func read(_ url: URL) throws -> Payload? {
        let bytes: Data
        do {
            bytes = try SecureFiles.read(url, limit: Self.sizeLimit)
        } catch SecureFileError.notFound {
            return nil
        } catch {
            throw KeybagError.storage(String(describing: error))
        }
        return try decode(bytes)
    }

    func write(_ payload: Payload, to url: URL) throws {
        do {
            try SecureFiles.writeAtomically(try encode(payload), to: url)
        } catch let error as KeybagError {
            throw error
        } catch {
            if let refusal = StorageRefusal(error) { throw refusal }
            throw KeybagError.storage(String(describing: error))
        }
    }
}
