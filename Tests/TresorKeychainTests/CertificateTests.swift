import Foundation
import Testing

@testable import TresorKeychain

/// Certificate attributes read from the DER, and the read-only System Roots keychain.
@Suite struct CertificateTests {
    /// A self-signed P-256 certificate made once with
    /// `openssl req -x509 -key key.pem -days 36500 -subj "/C=FR/O=Example, Inc./CN=Example Root" -set_serial 0x1234567890ABCDEF -sha256`.
    static let examplePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBwzCCAWmgAwIBAgIIEjRWeJCrze8wCgYIKoZIzj0EAwIwPDELMAkGA1UEBhMC
        RlIxFjAUBgNVBAoMDUV4YW1wbGUsIEluYy4xFTATBgNVBAMMDEV4YW1wbGUgUm9v
        dDAgFw0yNjExMjIwODUxNDdaGA8yMTI2MTAyOTA4NTE0N1owPDELMAkGA1UEBhMC
        RlIxFjAUBgNVBAoMDUV4YW1wbGUsIEluYy4xFTATBgNVBAMMDEV4YW1wbGUgUm9v
        dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABJBxBOe/nxqL3rmdaBZ72AZu3Ixb
        OHBrvFfN/D/U4KkDcp6DoijhLDT2vY5QiYvWwVPZ4zKdAuPmqit9pXLMSlKjUzBR
        MB0GA1UdDgQWBBRSs3L+que+VlWtmL29z0dIkAK7DzAfBgNVHSMEGDAWgBRSs3L+
        que+VlWtmL29z0dIkAK7DzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gA
        MEUCIQCKUGsir7PJF8sHHQWgHrkExTpYsNeHUwxHkIzLfh80PQIgZ/w0lx0yl7y3
        kp09X0VbozoAY6Ur9D92UKgDUzU3NjY=
        -----END CERTIFICATE-----

        """

    /// The DER of the subject (and issuer) Name, as `openssl asn1parse` shows it.
    static let exampleSubjectHex =
        "303c310b300906035504061302465231163014060355040a0c0d4578616d706c652c20496e632e3115301306035504030c0c4578616d706c6520526f6f74"
    /// SHA-1 of the subjectPublicKey bit string: computed with
    /// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform DER | tail -c 65 | openssl dgst -sha1`
    /// (the 65-byte uncompressed P-256 point ends the SubjectPublicKeyInfo).
    static let examplePublicKeyHashHex = "52b372feaae7be5655ad98bdbdcf47489002bb0f"
    /// SHA-256 of the DER (`openssl x509 -outform DER | sha256sum`).
    static let exampleSHA256Hex = "2dab48f2eddd9c4deb346270f744a7135fc16c3a5f1f2c51332160b66136e0d1"

    static var exampleDER: Data {
        let body = examplePEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body)!
    }

    static func hex(_ text: String) -> Data {
        var data = Data()
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            data.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    // MARK: fill

    @Test func fillReadsTheCertificate() throws {
        let filled = try CertificateAttributes.fill(ItemAttributes(), der: Self.exampleDER)
        #expect(filled.subjectSummary == #"CN=Example Root, O=Example\, Inc., C=FR"#)
        #expect(filled.serialNumber == Data([0x12, 0x34, 0x56, 0x78, 0x90, 0xAB, 0xCD, 0xEF]))
        #expect(filled.subject == Self.hex(Self.exampleSubjectHex))
        #expect(filled.issuer == filled.subject)
        #expect(filled.certificateType == 3)
        #expect(filled.certificateEncoding == 3)
        #expect(filled.publicKeyHash == Self.hex(Self.examplePublicKeyHashHex))
        // openssl derives the subject key identifier the same way (RFC 5280 method 1).
        #expect(filled.subjectKeyID == Self.hex("52b372feaae7be5655ad98bdbdcf47489002bb0f"))
        #expect(filled.label == "Example Root")
        #expect(filled.accessGroup == nil)
    }

    @Test func fillKeepsTheCallersLabelAndOtherAttributes() throws {
        var given = ItemAttributes()
        given.label = "My root"
        given.comment = "kept"
        given.accessible = .afterFirstUnlock
        let filled = try CertificateAttributes.fill(given, der: Self.exampleDER)
        #expect(filled.label == "My root")
        #expect(filled.comment == "kept")
        #expect(filled.accessible == .afterFirstUnlock)
        #expect(filled.subjectSummary != nil)
    }

    @Test func fillAcceptsGivenAttributesThatMatch() throws {
        var given = ItemAttributes()
        given.subject = Self.hex(Self.exampleSubjectHex)
        given.serialNumber = Data([0x12, 0x34, 0x56, 0x78, 0x90, 0xAB, 0xCD, 0xEF])
        given.publicKeyHash = Self.hex(Self.examplePublicKeyHashHex)
        given.subjectSummary = #"CN=Example Root, O=Example\, Inc., C=FR"#
        let filled = try CertificateAttributes.fill(given, der: Self.exampleDER)
        #expect(filled.subject == given.subject)
    }

    @Test func garbageIsAParamError() {
        for garbage in [Data(), Data("not a certificate".utf8), Data([0x30, 0x03, 0x02, 0x01, 0x01]), Self.exampleDER.dropLast(10)] {
            #expect(throws: KeychainError.param("the data is not a DER X.509 certificate")) {
                try CertificateAttributes.fill(ItemAttributes(), der: Data(garbage))
            }
        }
    }

    @Test func contradictingTheCertificateIsAParamError() {
        var subject = ItemAttributes()
        subject.subject = Data("CN=Someone else".utf8)
        #expect(throws: KeychainError.param("attribute subject does not match the certificate")) {
            try CertificateAttributes.fill(subject, der: Self.exampleDER)
        }
        var serial = ItemAttributes()
        serial.serialNumber = Data([1])
        #expect(throws: KeychainError.param("attribute serialNumber does not match the certificate")) {
            try CertificateAttributes.fill(serial, der: Self.exampleDER)
        }
        var summary = ItemAttributes()
        summary.subjectSummary = "CN=Example Root"
        #expect(throws: KeychainError.param("attribute subjectSummary does not match the certificate")) {
            try CertificateAttributes.fill(summary, der: Self.exampleDER)
        }
    }

    // MARK: System Roots on this machine (Debian's ca-certificates)

    @Test func systemRootsListsTheOperatingSystemsCertificates() throws {
        let roots = SystemRoots()
        #expect(SystemRoots.name == "System Roots")
        #expect(roots.count > 50)
        let all = try roots.copyMatching(ItemQuery(.certificate, limit: .all))
        #expect(all.count == roots.count)
        #expect(Set(all.map(\.id)).count == all.count)
        for item in all {
            #expect(item.id.hasPrefix("roots:") && item.id.count == "roots:".count + 16)
            #expect(item.secret == nil)
            let attributes = try #require(item.attributes)
            #expect(attributes.accessGroup == "system.roots")
            #expect(attributes.accessible == .always)
            #expect(attributes.certificateType != nil && attributes.subject != nil && attributes.publicKeyHash != nil)
        }
        // limit one
        #expect(try roots.copyMatching(ItemQuery(.certificate)).count == 1)
    }

    @Test func systemRootsFindsISRGRootX1() throws {
        let roots = SystemRoots()
        var byLabel = ItemQuery(.certificate, limit: .all, returnData: true)
        byLabel.attributes.label = "ISRG Root X1"
        let found = try roots.copyMatching(byLabel)
        try #require(found.count == 1)
        let der = try #require(found[0].secret)
        let parsed = try CertificateAttributes.fill(ItemAttributes(), der: der)
        #expect(parsed.subjectSummary == "CN=ISRG Root X1, O=Internet Security Research Group, C=US")
        #expect(parsed.issuer == parsed.subject)

        var bySummary = ItemQuery(.certificate, limit: .all)
        bySummary.attributes.subjectSummary = "CN=ISRG Root X1, O=Internet Security Research Group, C=US"
        let again = try roots.copyMatching(bySummary)
        #expect(again.map(\.id) == [found[0].id])
        #expect(again[0].secret == nil)

        // By id, and by the primary key attributes.
        #expect(try roots.copyMatching(ItemQuery(.certificate, id: found[0].id)).map(\.id) == [found[0].id])
        var byKey = ItemQuery(.certificate)
        byKey.attributes.issuer = parsed.issuer
        byKey.attributes.serialNumber = parsed.serialNumber
        #expect(try roots.copyMatching(byKey).map(\.id) == [found[0].id])
    }

    @Test func systemRootsQueriesThatMatchNothing() throws {
        let roots = SystemRoots()
        var query = ItemQuery(.certificate)
        query.attributes.label = "No Such Root CA"
        #expect(throws: KeychainError.itemNotFound) { try roots.copyMatching(query) }
        for itemClass in [ItemClass.genericPassword, .internetPassword, .key] {
            #expect(throws: KeychainError.itemNotFound) { try roots.copyMatching(ItemQuery(itemClass)) }
        }
        #expect(throws: KeychainError.itemNotFound) { try roots.copyMatching(ItemQuery(.certificate, id: "roots:0000000000000000")) }
        var synchronizable = ItemQuery(.certificate)
        synchronizable.attributes.synchronizable = true
        #expect(throws: KeychainError.itemNotFound) { try roots.copyMatching(synchronizable) }
        var wrongClassAttribute = ItemQuery(.certificate)
        wrongClassAttribute.attributes.service = "x"
        #expect(throws: KeychainError.param("attribute service does not apply to certificate items")) {
            try roots.copyMatching(wrongClassAttribute)
        }
    }

    @Test func systemRootsIsReadOnly() throws {
        let roots = SystemRoots()
        let count = roots.count
        #expect(throws: KeychainError.readOnly) {
            try roots.add(.certificate, attributes: ItemAttributes(), secret: Self.exampleDER)
        }
        #expect(throws: KeychainError.readOnly) {
            try roots.add(.genericPassword, attributes: ItemAttributes(), secret: Data("x".utf8))
        }
        var changes = ItemAttributes()
        changes.label = "renamed"
        #expect(throws: KeychainError.readOnly) {
            try roots.update(ItemQuery(.certificate), changes: changes, secret: nil)
        }
        #expect(throws: KeychainError.readOnly) {
            try roots.delete(ItemQuery(.certificate, limit: .all))
        }
        #expect(KeychainError.readOnly.osStatus == -25292)
        #expect(roots.count == count)
    }

    // MARK: System Roots on a directory of our own

    static func withTemporaryDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-roots-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test func anEmptyDirectoryHasNoRoots() throws {
        try Self.withTemporaryDirectory { directory in
            let roots = SystemRoots(directory: directory)
            #expect(roots.count == 0)
            #expect(throws: KeychainError.itemNotFound) { try roots.copyMatching(ItemQuery(.certificate, limit: .all)) }
        }
        let missing = SystemRoots(directory: URL(fileURLWithPath: "/nonexistent/tresor-roots"))
        #expect(missing.count == 0)
    }

    @Test func unparsableFilesAreSkipped() throws {
        try Self.withTemporaryDirectory { directory in
            try Data("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n".utf8)
                .write(to: directory.appendingPathComponent("garbage.pem"))
            try Data("hello".utf8).write(to: directory.appendingPathComponent("notes.crt"))
            try Data(Self.examplePEM.utf8).write(to: directory.appendingPathComponent("example.pem"))
            // Not a certificate file name: ignored even though it holds a certificate.
            try Data(Self.examplePEM.utf8).write(to: directory.appendingPathComponent("README.txt"))
            let roots = SystemRoots(directory: directory)
            #expect(roots.count == 1)
            let items = try roots.copyMatching(ItemQuery(.certificate, limit: .all, returnData: true))
            #expect(items.count == 1)
            #expect(items[0].secret == Self.exampleDER)
            #expect(items[0].id == "roots:" + Self.exampleSHA256Hex.prefix(16))
            #expect(items[0].attributes?.label == "Example Root")
            #expect(items[0].attributes?.subjectSummary == #"CN=Example Root, O=Example\, Inc., C=FR"#)
        }
    }

    @Test func bundlesLinksAndDERFilesAreReadAndDeduplicated() throws {
        try Self.withTemporaryDirectory { directory in
            let isrg = try String(contentsOfFile: "/etc/ssl/certs/ISRG_Root_X1.pem", encoding: .utf8)
            // A bundle with text around and between the blocks, and a damaged block in the middle.
            let bundle =
                "# bundle\n" + Self.examplePEM + "junk between\n"
                + "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n" + isrg
            try Data(bundle.utf8).write(to: directory.appendingPathComponent("ca-certificates.crt"))
            try Data(Self.examplePEM.utf8).write(to: directory.appendingPathComponent("example.pem"))
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("1a2b3c4d.0").path, withDestinationPath: "example.pem")
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("deadbeef.0").path, withDestinationPath: "missing.pem")
            try Self.exampleDER.write(to: directory.appendingPathComponent("example-der.crt"))
            let roots = SystemRoots(directory: directory)
            #expect(roots.count == 2)
            var query = ItemQuery(.certificate, limit: .all)
            query.attributes.label = "ISRG Root X1"
            #expect(try roots.copyMatching(query).count == 1)
        }
    }

    @Test func certificateFileNames() {
        for name in ["a.pem", "B.CRT", "ca-certificates.crt", "1a2b3c4d.0", "0A1B2C3D.12"] {
            #expect(SystemRoots.isCertificateFileName(name), "\(name)")
        }
        for name in ["java", "README", "1a2b3c4d", "1a2b3c4d.r0", "1a2b3c4.0", "cert.der", "x.pem.bak"] {
            #expect(!SystemRoots.isCertificateFileName(name), "\(name)")
        }
    }
}
