import Foundation
import Testing
import TresorModel

/// `ItemAttributes` decodes by hand (one pass over the names the JSON object has): every
/// attribute must survive a round trip, `null` must read as unset, and a decoder that refuses
/// unknown names must name the first one — the daemon relies on it so a misspelt `acount` does
/// not widen a query or a delete.
@Suite struct ItemAttributesDecodingTests {
    static var everything: ItemAttributes {
        var attributes = ItemAttributes()
        (attributes.accessGroup, attributes.accessible, attributes.accessControl) = ("TEAM.app", .afterFirstUnlock, .userPresence)
        (attributes.synchronizable, attributes.label, attributes.description, attributes.comment) = (true, "l", "d", "c")
        (attributes.creator, attributes.type, attributes.readableByScripts) = (4_000_000_000, 7, false)
        (attributes.creationDate, attributes.modificationDate) = (Date(timeIntervalSince1970: 1_800_000_000.5), Date(timeIntervalSince1970: 0))
        (attributes.custom, attributes.account, attributes.service, attributes.generic) = (["b": "2", "a": "1"], "ada", "svc", Data([1, 2]))
        (attributes.server, attributes.protocol, attributes.port, attributes.path) = ("s", "ftp", 21, "/")
        (attributes.authenticationType, attributes.securityDomain) = ("t", "d")
        (attributes.certificateType, attributes.certificateEncoding, attributes.subjectSummary) = (1, 2, "CN=x")
        (attributes.subject, attributes.issuer, attributes.serialNumber) = (Data([3]), Data([4]), Data([5]))
        (attributes.subjectKeyID, attributes.publicKeyHash) = (Data([6]), Data([7]))
        (attributes.keyClass, attributes.applicationLabel, attributes.applicationTag) = (.symmetric, Data([8]), Data([9]))
        (attributes.keyType, attributes.keySizeInBits, attributes.effectiveKeySize) = ("aes", 128, 256)
        return attributes
    }

    static func decoder(strict: Bool) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        if strict { decoder.userInfo[ItemAttributes.refusesUnknownNames] = true }
        return decoder
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    @Test func everyAttributeSurvivesARoundTrip() throws {
        let json = try Self.encoder.encode(Self.everything)
        let names = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any]).keys
        #expect(names.count == 36, "every property is set, so every name is written")
        for strict in [false, true] {
            #expect(try Self.decoder(strict: strict).decode(ItemAttributes.self, from: json) == Self.everything)
        }
        // Each attribute alone, so no case of the decoder reads another's value.
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        for (name, value) in object {
            let single = try JSONSerialization.data(withJSONObject: [name: value])
            let decoded = try Self.decoder(strict: true).decode(ItemAttributes.self, from: single)
            let again = try #require(try JSONSerialization.jsonObject(with: Self.encoder.encode(decoded)) as? [String: Any])
            #expect(Array(again.keys) == [name], "\(name)")
        }
    }

    @Test func nullAndAbsentAreUnset() throws {
        let decoded = try Self.decoder(strict: true).decode(ItemAttributes.self, from: Data(#"{"service": "s", "account": null}"#.utf8))
        var expected = ItemAttributes()
        expected.service = "s"
        #expect(decoded == expected)
        #expect(try Self.decoder(strict: true).decode(ItemAttributes.self, from: Data("{}".utf8)) == ItemAttributes())
    }

    @Test func unknownNamesAreRefusedOnlyWhenAsked() throws {
        let json = Data(#"{"service": "s", "zeta": 1, "acount": "typo"}"#.utf8)
        #expect(throws: UnknownAttributeError(name: "acount")) {
            try Self.decoder(strict: true).decode(ItemAttributes.self, from: json)
        }
        #expect(UnknownAttributeError(name: "acount").description == #"unknown attribute "acount""#)
        var expected = ItemAttributes()
        expected.service = "s"
        #expect(try Self.decoder(strict: false).decode(ItemAttributes.self, from: json) == expected)
        // Inside a query, as the daemon reads one.
        let query = Data(#"{"itemClass": "genp", "attributes": {"acount": "x"}, "limit": "one", "returnData": true, "returnAttributes": false}"#.utf8)
        #expect(throws: UnknownAttributeError(name: "acount")) { try Self.decoder(strict: true).decode(ItemQuery.self, from: query) }
    }

    @Test func aValueOfTheWrongTypeIsADecodingError() {
        #expect(throws: DecodingError.self) {
            try Self.decoder(strict: true).decode(ItemAttributes.self, from: Data(#"{"port": "eighty"}"#.utf8))
        }
    }
}
