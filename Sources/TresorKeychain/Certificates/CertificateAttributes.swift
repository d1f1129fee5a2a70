import Crypto
import Foundation
import SwiftASN1
import TresorModel
import X509

/// Reads the attributes of a certificate item from its DER, as Apple's keychain does when a
/// certificate is added (`SecCertificate` → `kSecAttrSubject`, `kSecAttrIssuer`, …).
enum CertificateAttributes {
    /// Apple's `CSSM_CERT_X_509v1`, `…v2`, `…v3`.
    static let typeX509v1 = 1, typeX509v2 = 2, typeX509v3 = 3
    /// Apple's `CSSM_CERT_ENCODING_DER`.
    static let encodingDER = 3

    /// `attributes` with every attribute read from the certificate `der` set.
    ///
    /// Throws ``KeychainError/param(_:)`` when `der` is not a DER X.509 certificate, or when
    /// `attributes` already gives one of the derived attributes with another value.
    static func fill(_ attributes: ItemAttributes, der: Data) throws -> ItemAttributes {
        let bytes = Array(der)
        let certificate: Certificate
        let subjectPublicKey: [UInt8]
        do {
            certificate = try Certificate(derEncoded: bytes)
            subjectPublicKey = try Self.subjectPublicKeyBits(der: bytes)
        } catch {
            throw KeychainError.param("the data is not a DER X.509 certificate")
        }

        var derived = ItemAttributes()
        switch certificate.version {
        case .v3: derived.certificateType = typeX509v3
        case .v1: derived.certificateType = typeX509v1
        default: derived.certificateType = typeX509v2
        }
        derived.certificateEncoding = encodingDER
        derived.subject = try Data(Self.derEncoding(of: certificate.subject))
        derived.issuer = try Data(Self.derEncoding(of: certificate.issuer))
        derived.serialNumber = Data(certificate.serialNumber.bytes)
        if let identifier = try? certificate.extensions.subjectKeyIdentifier {
            derived.subjectKeyID = Data(identifier.keyIdentifier)
        }
        derived.publicKeyHash = Data(Insecure.SHA1.hash(data: subjectPublicKey))
        derived.subjectSummary = Self.summary(of: certificate.subject)

        var filled = attributes
        func check<Value: Equatable>(_ name: String, _ keyPath: WritableKeyPath<ItemAttributes, Value?>) throws {
            if let given = attributes[keyPath: keyPath], given != derived[keyPath: keyPath] {
                throw KeychainError.param("attribute \(name) does not match the certificate")
            }
            filled[keyPath: keyPath] = derived[keyPath: keyPath]
        }
        try check("certificateType", \.certificateType)
        try check("certificateEncoding", \.certificateEncoding)
        try check("subject", \.subject)
        try check("issuer", \.issuer)
        try check("serialNumber", \.serialNumber)
        try check("subjectKeyID", \.subjectKeyID)
        try check("publicKeyHash", \.publicKeyHash)
        try check("subjectSummary", \.subjectSummary)
        if filled.label == nil {
            filled.label = Self.commonName(of: certificate.subject) ?? derived.subjectSummary
        }
        return filled
    }

    // MARK: Names

    static func derEncoding(of name: DistinguishedName) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(name)
        return serializer.serializedBytes
    }

    /// The name as RFC 4514 text: most specific RDN first, `", "` between RDNs, `"+"` inside
    /// one (`CN=Example Root, O=Example\, Inc., C=FR`).
    static func summary(of name: DistinguishedName) -> String {
        name.reversed().map { rdn in
            rdn.map { attribute in
                let value = Self.text(of: attribute.value).map(Self.escaped) ?? Self.hexForm(of: attribute.value)
                return "\(Self.key(of: attribute.type))=\(value)"
            }.joined(separator: "+")
        }.joined(separator: ", ")
    }

    /// The most specific common name; failing that the most specific organizational unit or
    /// organization (what Apple shows for certificates without a CN).
    static func commonName(of name: DistinguishedName) -> String? {
        let types: [ASN1ObjectIdentifier] = [
            .RDNAttributeType.commonName, .RDNAttributeType.organizationalUnitName, .RDNAttributeType.organizationName,
        ]
        for type in types {
            for rdn in name.reversed() {
                if let attribute = rdn.first(where: { $0.type == type }), let text = Self.text(of: attribute.value), !text.isEmpty {
                    return text
                }
            }
        }
        return nil
    }

    private static let keys: [ASN1ObjectIdentifier: String] = [
        .RDNAttributeType.commonName: "CN", .RDNAttributeType.countryName: "C",
        .RDNAttributeType.localityName: "L", .RDNAttributeType.stateOrProvinceName: "ST",
        .RDNAttributeType.organizationName: "O", .RDNAttributeType.organizationalUnitName: "OU",
        .RDNAttributeType.streetAddress: "STREET", .RDNAttributeType.domainComponent: "DC",
        .RDNAttributeType.emailAddress: "E", [0, 9, 2342, 19_200_300, 100, 1, 1]: "UID",
    ]

    private static func key(of type: ASN1ObjectIdentifier) -> String {
        keys[type] ?? String(describing: type)
    }

    /// An attribute value as text when it is one of the directory string types; nil otherwise.
    static func text(of value: RelativeDistinguishedName.Attribute.Value) -> String? {
        if let string = String(value) { return string }
        guard let der = try? derEncoding(of: value), let node = try? DER.parse(der),
            node.identifier.tagClass == .universal, case .primitive(let content) = node.content
        else { return nil }
        switch node.identifier.tagNumber {
        case 12, 19, 22, 26:  // UTF8String, PrintableString, IA5String, VisibleString
            return String(decoding: content, as: UTF8.self)
        case 20:  // TeletexString: in practice Latin-1
            return String(String.UnicodeScalarView(content.map { Unicode.Scalar($0) }))
        case 30:  // BMPString: UTF-16BE
            guard content.count % 2 == 0 else { return nil }
            let units = stride(from: content.startIndex, to: content.endIndex, by: 2).map {
                UInt16(content[$0]) << 8 | UInt16(content[$0 + 1])
            }
            return String(decoding: units, as: UTF16.self)
        case 28:  // UniversalString: UTF-32BE
            guard content.count % 4 == 0 else { return nil }
            var scalars = String.UnicodeScalarView()
            for offset in stride(from: content.startIndex, to: content.endIndex, by: 4) {
                let code = content[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(code) else { return nil }
                scalars.append(scalar)
            }
            return String(scalars)
        default:
            return nil
        }
    }

    /// A value that is not a string, as `#` and the hex of its DER (RFC 4514 §2.4).
    static func hexForm(of value: RelativeDistinguishedName.Attribute.Value) -> String {
        "#" + ((try? derEncoding(of: value)) ?? []).hexString
    }

    private static func derEncoding(of value: RelativeDistinguishedName.Attribute.Value) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1Any(value))
        return serializer.serializedBytes
    }

    /// RFC 4514 §2.4 escaping: `, + " \ < > ;` anywhere, `#` or space leading, space trailing.
    static func escaped(_ text: String) -> String {
        let characters = Array(text)
        var result = ""
        for (index, character) in characters.enumerated() {
            let special = ",+\"\\<>;".contains(character)
            let leading = index == 0 && (character == " " || character == "#")
            let trailing = index == characters.count - 1 && character == " "
            if special || leading || trailing { result.append("\\") }
            result.append(character)
        }
        return result
    }

    // MARK: Public key

    /// The contents of the subjectPublicKey BIT STRING (what Apple's `kSecAttrPublicKeyHash`
    /// hashes), as they appear in the certificate.
    static func subjectPublicKeyBits(der: [UInt8]) throws -> [UInt8] {
        let root = try DER.parse(der)
        guard case .constructed(let certificateNodes) = root.content,
            let tbs = certificateNodes.first(where: { _ in true }),
            case .constructed(let tbsNodes) = tbs.content
        else { throw ASN1Error.invalidASN1Object(reason: "not a certificate") }
        // TBSCertificate: [0] version?, serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo, …
        var fields = Array(tbsNodes)
        if let first = fields.first, first.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
            fields.removeFirst()
        }
        guard fields.count > 5, case .constructed(let spkiNodes) = fields[5].content else {
            throw ASN1Error.invalidASN1Object(reason: "no subjectPublicKeyInfo")
        }
        let spki = Array(spkiNodes)
        guard spki.count == 2 else { throw ASN1Error.invalidASN1Object(reason: "bad subjectPublicKeyInfo") }
        return Array(try ASN1BitString(derEncoded: spki[1]).bytes)
    }
}
