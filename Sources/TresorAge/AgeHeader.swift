import Crypto
import Foundation
import TresorCrypto

/// An age v1 header: the version line, the recipient stanzas and the MAC line
/// (`--- ` + Base64 of HMAC-SHA256 over everything before it, through `---`).
struct AgeHeader {
    static let versionLine = "age-encryption.org/v1"
    /// Headers Tresor reads are a few hundred bytes; anything near this is not one.
    static let maximumByteCount = 64 * 1024

    var stanzas: [AgeStanza]

    /// The bytes the MAC covers: everything up to and including `---`.
    var authenticatedBytes: Data {
        Data((Self.versionLine + "\n" + stanzas.map(\.encoded).joined() + "---").utf8)
    }

    /// The whole header, MAC line included, as written before the payload.
    func encoded(fileKey: SymmetricKey) -> Data {
        let mac = Self.mac(of: authenticatedBytes, fileKey: fileKey)
        return authenticatedBytes + Data((" " + AgeBase64.encode(mac) + "\n").utf8)
    }

    static func mac(of bytes: Data, fileKey: SymmetricKey) -> Data {
        let key = KeyDerivation.hkdfSHA256(inputKeyMaterial: fileKey, salt: Data(), info: "header")
        return MessageAuthentication.hmacSHA256(bytes, key: key)
    }

    /// Reads a header from `reader`, leaving it at the first byte of the payload.
    /// - Returns: The header, the bytes its MAC covers, and the MAC it carries.
    static func read(from reader: inout AgeByteReader) throws -> (header: AgeHeader, authenticated: Data, mac: Data) {
        let firstLine: String?
        do {
            firstLine = try reader.readLine(maximumLength: 128)
        } catch {
            throw AgeError.notAnAgeFile("it does not start with the age version line")
        }
        guard let first = firstLine else { throw AgeError.notAnAgeFile("the file is empty") }
        guard first == versionLine else {
            if first.hasPrefix("-----BEGIN AGE ENCRYPTED FILE") {
                throw AgeError.notAnAgeFile("armored (text) age files are not read; use `age -d` to convert it")
            }
            if first.hasPrefix("age-encryption.org/") {
                throw AgeError.unsupportedVersion(String(first.dropFirst("age-encryption.org/".count).prefix(16)))
            }
            throw AgeError.notAnAgeFile("it does not start with the age version line")
        }
        var authenticated = Data((first + "\n").utf8)
        var stanzas: [AgeStanza] = []
        var pending: (arguments: [String], body: String)?
        while true {
            guard authenticated.count < maximumByteCount else { throw AgeError.malformedHeader("the header is too long") }
            guard let line = try reader.readLine(maximumLength: maximumByteCount) else {
                throw AgeError.malformedHeader("the header ends before its MAC line")
            }
            if var stanza = pending {
                guard line.count <= AgeStanza.columns, !line.hasPrefix("-> "), !line.hasPrefix("---") else {
                    throw AgeError.malformedHeader("a stanza body line is longer than 64 columns or missing")
                }
                stanza.body += line
                authenticated += Data((line + "\n").utf8)
                if line.count < AgeStanza.columns {
                    guard let body = AgeBase64.decode(Substring(stanza.body)) else {
                        throw AgeError.malformedHeader("a stanza body is not canonical Base64")
                    }
                    stanzas.append(AgeStanza(arguments: stanza.arguments, body: body))
                    pending = nil
                } else {
                    pending = stanza
                }
            } else if line.hasPrefix("-> ") {
                let arguments = line.dropFirst(3).split(separator: " ", omittingEmptySubsequences: false)
                guard arguments.allSatisfy(AgeStanza.isValidArgument) else {
                    throw AgeError.malformedHeader("a stanza argument is empty or not visible ASCII")
                }
                pending = (arguments.map(String.init), "")
                authenticated += Data((line + "\n").utf8)
            } else if line.hasPrefix("--- ") {
                authenticated += Data("---".utf8)
                guard let mac = AgeBase64.decode(line.dropFirst(4)), mac.count == 32 else {
                    throw AgeError.malformedHeader("the MAC line does not hold a 32-byte MAC")
                }
                guard !stanzas.isEmpty else { throw AgeError.malformedHeader("the header has no recipient stanza") }
                return (AgeHeader(stanzas: stanzas), authenticated, mac)
            } else {
                throw AgeError.malformedHeader("a header line is neither a stanza nor the MAC line")
            }
        }
    }
}
