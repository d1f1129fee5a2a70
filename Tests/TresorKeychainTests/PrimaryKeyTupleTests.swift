import Foundation
import Testing

@testable import TresorKeychain

/// The bytes every stored blind-index tag is an HMAC of. They must never change: a stored
/// item's `primary_key_tag` and `lookup_tag` were computed from them, and another
/// serialisation would make every existing item unfindable by its primary key and let a
/// duplicate in beside it. Pinned as known answers, one per item class.
@Suite struct PrimaryKeyTupleTests {
    static func tuple(_ values: AttributeValues, _ itemClass: ItemClass, includingGroup: Bool = true) -> String {
        String(decoding: values.primaryKeyTuple(for: itemClass, includingGroup: includingGroup), as: UTF8.self)
    }

    static var genericPassword: ItemAttributes {
        var attributes = ItemAttributes()
        attributes.accessGroup = "TEAM.app"
        attributes.service = "api.example.com/v1"
        attributes.account = "ada \"lovelace\" é\n"
        attributes.synchronizable = false
        return attributes
    }

    static var internetPassword: ItemAttributes {
        var attributes = ItemAttributes()
        (attributes.accessGroup, attributes.server, attributes.protocol, attributes.port) = ("g", "example.com", "https", 443)
        (attributes.path, attributes.account, attributes.authenticationType) = ("/login", "u", "form")
        (attributes.securityDomain, attributes.synchronizable) = ("realm", true)
        return attributes
    }

    static var certificate: ItemAttributes {
        var attributes = ItemAttributes()
        (attributes.accessGroup, attributes.certificateType, attributes.synchronizable) = ("g", 3, false)
        (attributes.issuer, attributes.serialNumber) = (Data([0x30, 0x0b, 0xff]), Data([1, 2, 3, 0xfe]))
        return attributes
    }

    static var key: ItemAttributes {
        var attributes = ItemAttributes()
        (attributes.accessGroup, attributes.keyClass, attributes.keyType, attributes.synchronizable) = ("g", .private, "ec", false)
        (attributes.applicationLabel, attributes.applicationTag) = (Data([9, 9]), Data("tag/1".utf8))
        (attributes.keySizeInBits, attributes.effectiveKeySize) = (256, 256)
        return attributes
    }

    /// Every attribute set, each of a different JSON kind.
    static var everything: ItemAttributes {
        var attributes = genericPassword
        (attributes.label, attributes.description, attributes.comment) = ("l", "d", "c")
        (attributes.creator, attributes.type, attributes.readableByScripts) = (4_000_000_000, 7, true)
        (attributes.creationDate, attributes.modificationDate) = (Date(timeIntervalSince1970: 1_800_000_000.5), Date(timeIntervalSince1970: 0))
        (attributes.accessible, attributes.accessControl) = (.whenUnlocked, .userPresence)
        (attributes.custom, attributes.generic) = (["b": "2", "a": "1"], Data([1, 2]))
        (attributes.server, attributes.protocol, attributes.port, attributes.path) = ("s", "ftp", 21, "/")
        (attributes.authenticationType, attributes.securityDomain) = ("t", "d")
        (attributes.certificateType, attributes.certificateEncoding, attributes.subjectSummary) = (1, 2, "CN=x")
        (attributes.subject, attributes.issuer, attributes.serialNumber) = (Data([3]), Data([4]), Data([5]))
        (attributes.subjectKeyID, attributes.publicKeyHash) = (Data([6]), Data([7]))
        (attributes.keyClass, attributes.applicationLabel, attributes.applicationTag) = (.symmetric, Data([8]), Data([9]))
        (attributes.keyType, attributes.keySizeInBits, attributes.effectiveKeySize) = ("aes", 128, 128)
        return attributes
    }

    @Test func theTuplesOfEveryClassAreTheKnownBytes() {
        let generic = AttributeValues(Self.genericPassword)
        #expect(Self.tuple(generic, .genericPassword) == #"["genp","TEAM.app","api.example.com\/v1","ada \"lovelace\" é\n",false]"#)
        #expect(Self.tuple(generic, .genericPassword, includingGroup: false) == #"["genp","api.example.com\/v1","ada \"lovelace\" é\n",false]"#)
        #expect(
            Self.tuple(generic.with(accessGroup: "other"), .genericPassword)
                == #"["genp","other","api.example.com\/v1","ada \"lovelace\" é\n",false]"#)
        var partial = ItemAttributes()
        (partial.accessGroup, partial.account) = ("tresor", "only")
        #expect(Self.tuple(AttributeValues(partial), .genericPassword) == #"["genp","tresor",null,"only",null]"#)
        #expect(
            Self.tuple(AttributeValues(Self.internetPassword), .internetPassword)
                == #"["inet","g","example.com","https",443,"\/login","u","form","realm",true]"#)
        #expect(Self.tuple(AttributeValues(Self.certificate), .certificate) == #"["cert","g",3,"MAv\/","AQID\/g==",false]"#)
        #expect(Self.tuple(AttributeValues(Self.key), .key) == #"["keys","g","private","CQk=","dGFnLzE=","ec",256,256,false]"#)
    }

    /// A query's values are taken from ``ItemAttributes`` directly; a stored row's from the JSON
    /// it was sealed as. Both must see the same values, or a lookup would miss its own item.
    @Test func valuesFromAttributesAndFromTheirSealedJSONAgree() throws {
        for attributes in [Self.genericPassword, Self.internetPassword, Self.certificate, Self.key, Self.everything] {
            let direct = AttributeValues(attributes)
            let stored = try AttributeValues(json: ItemAttributes.encoder.encode(attributes), ofItem: 1)
            #expect(Set(direct.values.keys) == Set(stored.values.keys))
            #expect(direct.matches(stored) && stored.matches(direct))
            for itemClass in ItemClass.allCases {
                #expect(direct.primaryKeyTuple(for: itemClass) == stored.primaryKeyTuple(for: itemClass))
            }
        }
        // Every attribute is covered: `everything` sets each name the keychain knows.
        #expect(Set(AttributeValues(Self.everything).values.keys) == ItemAttributes.knownNames)
        // … and the names the keychain knows are the ones a request may use (a decoder that
        // refuses unknown names, as the daemon's, takes each of them).
        let strict = JSONDecoder()
        strict.userInfo[ItemAttributes.refusesUnknownNames] = true
        let written = try JSONSerialization.jsonObject(with: ItemAttributes.encoder.encode(Self.everything)) as? [String: Any]
        #expect(Set(written?.keys ?? [:].keys) == ItemAttributes.knownNames)
        for name in ItemAttributes.knownNames {
            #expect(throws: Never.self, "\(name)") { try strict.decode(ItemAttributes.self, from: Data("{\"\(name)\": null}".utf8)) }
        }
    }

    /// The tuple is written by hand for speed; JSONSerialization is the definition. Every ASCII
    /// character, the escapes, and non-ASCII text (combining marks, line separators, emoji, a
    /// byte-order mark) in random strings and positions must come out byte for byte the same.
    @Test func theHandWrittenTupleIsJSONSerializationsBytes() throws {
        let ascii: [String] = (0..<0x80).map { String(Unicode.Scalar(UInt8($0))) }
        let alphabet: [String] = ascii + ["é", "e\u{301}", "\u{2028}", "\u{2029}", "😀", "\u{FEFF}", "\u{80}", "\u{9F}", "ß", "日本"]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<400 {
            var elements: [Any] = [ItemClass.allCases[round % 4].rawValue]
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: elements.append(Int.random(in: Int.min...Int.max, using: &generator))
                case 1: elements.append(Bool.random(using: &generator))
                case 2: elements.append(NSNull())
                default:
                    elements.append((0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined())
                }
            }
            let expected = try JSONSerialization.data(withJSONObject: elements, options: [.sortedKeys])
            #expect(AttributeValues.jsonArray(elements) == expected, "\(String(decoding: expected, as: UTF8.self))")
        }
        // Values parsed from a row's JSON are Foundation numbers: left to JSONSerialization.
        let parsed = try JSONSerialization.jsonObject(with: Data("[443, true]".utf8)) as! [Any]
        #expect(AttributeValues.jsonArray(["inet"] + parsed) == nil)
    }

    @Test func aDifferentValueOfAnyKindDoesNotMatch() {
        let stored = AttributeValues(Self.everything)
        var changes: [ItemAttributes] = []
        var a = ItemAttributes(); a.port = 22; changes.append(a)
        a = ItemAttributes(); a.synchronizable = true; changes.append(a)
        a = ItemAttributes(); a.generic = Data([1, 3]); changes.append(a)
        a = ItemAttributes(); a.creationDate = Date(timeIntervalSince1970: 1_800_000_000); changes.append(a)
        a = ItemAttributes(); a.custom = ["a": "2"]; changes.append(a)
        a = ItemAttributes(); a.keyClass = .public; changes.append(a)
        a = ItemAttributes(); a.account = "ada \"lovelace\" e\u{301}\n"; changes.append(a)
        for query in changes { #expect(!stored.matches(AttributeValues(query))) }
        var same = ItemAttributes(); same.port = 21; same.custom = ["a": "1"]; same.generic = Data([1, 2])
        #expect(stored.matches(AttributeValues(same)))
    }

    /// A row's values parsed from its JSON are Foundation numbers, a query's are Swift values:
    /// `true` matches `true` and `1` matches `1`, but a number never matches a boolean.
    @Test func parsedNumbersAndBooleansMatchTypedOnesOfTheirKindOnly() throws {
        let row = try AttributeValues(json: Data(#"{"port":1,"synchronizable":true}"#.utf8), ofItem: 1)
        var query = ItemAttributes()
        (query.port, query.synchronizable) = (1, true)
        #expect(row.matches(AttributeValues(query)) && AttributeValues(query).matches(row))
        let confused = try AttributeValues(json: Data(#"{"port":true,"synchronizable":1}"#.utf8), ofItem: 1)
        #expect(!confused.matches(AttributeValues(query)))
    }
}
