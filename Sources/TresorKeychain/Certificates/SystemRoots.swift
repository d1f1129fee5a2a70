import Crypto
import Foundation
import SwiftASN1
import Synchronization
import TresorKeybag
import TresorModel

/// The operating system's CA certificates (`/etc/ssl/certs`) as certificate items: the
/// read-only **System Roots** keychain (docs/API.md, "Keychains"). Every attempt to change it fails
/// with ``KeychainError/readOnly``.
///
/// The directory is read once, on first use: every `*.pem`, `*.crt` and hash-named (`1a2b3c4d.0`)
/// file, following symbolic links. A file may hold several PEM certificates (Debian's
/// `ca-certificates.crt` holds them all) or one DER certificate; a certificate seen in several
/// files is listed once, and whatever does not parse is skipped.
public final class SystemRoots: Sendable {
    public static let name = "System Roots"
    /// The access group of every System Roots item.
    public static let accessGroup = "system.roots"

    struct Root: Sendable {
        var id: String
        var attributes: ItemAttributes
        var der: Data
    }

    public let directory: URL
    private let loaded = Mutex<[Root]?>(nil)

    public init(directory: URL = URL(fileURLWithPath: "/etc/ssl/certs")) {
        self.directory = directory
    }

    /// How many distinct certificates the directory holds.
    public var count: Int { roots.count }

    /// Finds certificates (`SecItemCopyMatching` on the System Roots keychain). Only the
    /// certificate class has items; anything else, or nothing matching, is
    /// ``KeychainError/itemNotFound``.
    public func copyMatching(_ query: ItemQuery) throws -> [KeychainItem] {
        guard query.itemClass == .certificate else { throw KeychainError.itemNotFound }
        try query.attributes.validate(for: .certificate, purpose: .query)
        var wanted = query.attributes
        wanted.synchronizable = wanted.synchronizable ?? false
        let wantedValues = AttributeValues(wanted)
        var results: [KeychainItem] = []
        for root in roots {
            if let id = query.id, id != root.id { continue }
            guard AttributeValues(root.attributes).matches(wantedValues) else { continue }
            results.append(
                KeychainItem(
                    id: root.id, itemClass: .certificate,
                    attributes: query.returnAttributes ? root.attributes : nil,
                    secret: query.returnData ? root.der : nil))
            if query.limit == .one { break }
        }
        guard !results.isEmpty else { throw KeychainError.itemNotFound }
        return results
    }

    /// Always fails: System Roots is read-only.
    @discardableResult
    public func add(_ itemClass: ItemClass, attributes: ItemAttributes, secret: Data) throws -> KeychainItem {
        throw KeychainError.readOnly
    }

    /// Always fails: System Roots is read-only.
    @discardableResult
    public func update(_ query: ItemQuery, changes: ItemAttributes, secret: Data?) throws -> Int {
        throw KeychainError.readOnly
    }

    /// Always fails: System Roots is read-only.
    @discardableResult
    public func delete(_ query: ItemQuery) throws -> Int {
        throw KeychainError.readOnly
    }

    // MARK: Loading

    /// The certificates, read from the directory on first use.
    var roots: [Root] {
        loaded.withLock { cached in
            if let cached { return cached }
            let roots = Self.load(directory)
            cached = roots
            return roots
        }
    }

    static func load(_ directory: URL) -> [Root] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        var roots: [Root] = []
        var seenDigests: Set<Data> = []
        var seenFiles: Set<String> = []
        for name in names where isCertificateFileName(name) {
            let file = directory.appendingPathComponent(name).resolvingSymlinksInPath()
            // Hash-named links point at the *.pem files: read each file once.
            guard seenFiles.insert(file.path).inserted else { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let contents = try? Data(contentsOf: file)
            else { continue }
            for der in certificates(in: contents) {
                let digest = Data(SHA256.hash(data: der))
                guard !seenDigests.contains(digest) else { continue }
                var attributes = ItemAttributes()
                attributes.accessGroup = accessGroup
                attributes.accessible = .always
                attributes.synchronizable = false
                guard let filled = try? CertificateAttributes.fill(attributes, der: der) else { continue }
                seenDigests.insert(digest)
                let id = "roots:" + digest.prefix(8).hexString
                roots.append(Root(id: id, attributes: filled, der: der))
            }
        }
        return roots
    }

    /// `*.pem`, `*.crt`, and OpenSSL's hash-named links (`1a2b3c4d.0`).
    static func isCertificateFileName(_ name: String) -> Bool {
        let lowercased = name.lowercased()
        if lowercased.hasSuffix(".pem") || lowercased.hasSuffix(".crt") { return true }
        let parts = lowercased.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit)
            && !parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)
    }

    private static let beginMarker = "-----BEGIN CERTIFICATE-----"

    /// The DER certificates in a file: each PEM `CERTIFICATE` block, or the file itself when it
    /// holds no PEM (a DER `.crt`).
    static func certificates(in contents: Data) -> [Data] {
        // Latin-1 always decodes, so comments in other encodings do not hide the blocks.
        guard let text = String(data: contents, encoding: .utf8) ?? String(data: contents, encoding: .isoLatin1),
            text.contains(beginMarker)
        else {
            return contents.isEmpty ? [] : [contents]
        }
        var blocks: [Data] = []
        for piece in text.components(separatedBy: beginMarker).dropFirst() {
            // Each piece runs to its END marker; a damaged block is skipped, not the file.
            guard let document = try? PEMDocument(pemString: beginMarker + throughEndMarker(piece)),
                document.discriminator == "CERTIFICATE"
            else { continue }
            blocks.append(Data(document.derBytes))
        }
        return blocks
    }

    /// `piece` up to and including its `-----END CERTIFICATE-----` (all of it if absent), so
    /// that text between blocks does not reach the PEM parser.
    private static func throughEndMarker(_ piece: String) -> String {
        guard let range = piece.range(of: "-----END CERTIFICATE-----") else { return piece }
        return String(piece[..<range.upperBound]) + "\n"
    }
}
