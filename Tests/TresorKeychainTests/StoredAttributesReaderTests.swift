import Foundation
import Testing

@testable import TresorKeychain

/// Stored attributes are read by a reader of our own rather than `JSONDecoder` (for speed);
/// `JSONDecoder` stays the definition. Whatever the reader accepts, `JSONDecoder` must accept
/// and decode to the same attributes — or a lookup would see another item than was stored.
@Suite struct StoredAttributesReaderTests {
    static func decoded(_ json: Data) -> ItemAttributes? {
        try? ItemAttributes.decoder.decode(ItemAttributes.self, from: json)
    }

    static func read(_ json: String) throws -> ItemAttributes {
        try StoredAttributesReader.attributes(from: Data(json.utf8))
    }

    @Test func readsWhatTheEncoderWroteForEveryAttribute() throws {
        for attributes in [
            PrimaryKeyTupleTests.everything, PrimaryKeyTupleTests.internetPassword,
            PrimaryKeyTupleTests.certificate, PrimaryKeyTupleTests.key, ItemAttributes(),
        ] {
            let json = try ItemAttributes.encoder.encode(attributes)
            #expect(try StoredAttributesReader.attributes(from: json) == attributes, "\(String(decoding: json, as: UTF8.self))")
        }
    }

    /// Random attributes — every kind of value, text with every ASCII character, escapes and
    /// non-ASCII — come back as they went in, as `JSONDecoder` gives them.
    @Test func randomAttributesComeBackAsJSONDecoderGivesThem() throws {
        let alphabet: [String] =
            (0..<0x80).map { String(Unicode.Scalar(UInt8($0))) }
            + ["é", "e\u{301}", "\u{2028}", "😀", "\u{FEFF}", "\u{FFFD}", "日本", "\\u0041", "\\"]
        var generator = SystemRandomNumberGenerator()
        func text() -> String? {
            Bool.random(using: &generator)
                ? nil
                : (0..<Int.random(in: 0...20, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
        }
        func bytes() -> Data? {
            Bool.random(using: &generator)
                ? nil : Data((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
        func number() -> Int? { Bool.random(using: &generator) ? nil : Int.random(in: Int.min...Int.max, using: &generator) }
        func date() -> Date? {
            Bool.random(using: &generator) ? nil : Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &generator))
        }
        for _ in 0..<300 {
            var a = ItemAttributes()
            (a.accessGroup, a.label, a.description, a.comment, a.account, a.service) = (text(), text(), text(), text(), text(), text())
            (a.server, a.protocol, a.path, a.authenticationType, a.securityDomain) = (text(), text(), text(), text(), text())
            (a.subjectSummary, a.keyType) = (text(), text())
            (a.generic, a.subject, a.issuer, a.serialNumber, a.subjectKeyID) = (bytes(), bytes(), bytes(), bytes(), bytes())
            (a.publicKeyHash, a.applicationLabel, a.applicationTag) = (bytes(), bytes(), bytes())
            (a.port, a.certificateType, a.certificateEncoding, a.keySizeInBits, a.effectiveKeySize) = (
                number(), number(), number(), number(), number()
            )
            a.creator = Bool.random(using: &generator) ? UInt32.random(in: 0...UInt32.max, using: &generator) : nil
            a.type = Bool.random(using: &generator) ? UInt32.random(in: 0...UInt32.max, using: &generator) : nil
            (a.creationDate, a.modificationDate) = (date(), date())
            a.synchronizable = Bool.random(using: &generator) ? Bool.random(using: &generator) : nil
            a.readableByScripts = Bool.random(using: &generator) ? Bool.random(using: &generator) : nil
            a.accessible = Bool.random(using: &generator) ? ProtectionClass.allCases.randomElement(using: &generator) : nil
            a.accessControl = Bool.random(using: &generator) ? .userPresence : nil
            a.keyClass = [nil, .public, .private, .symmetric].randomElement(using: &generator)!
            if Bool.random(using: &generator) {
                a.custom = Dictionary(
                    (0..<Int.random(in: 0...4, using: &generator)).map { _ in (text() ?? "", text() ?? "") }, uniquingKeysWith: { $1 })
            }
            let json = try ItemAttributes.encoder.encode(a)
            let read = try StoredAttributesReader.attributes(from: json)
            #expect(read == Self.decoded(json), "\(String(decoding: json, as: UTF8.self))")
            #expect(read == a, "\(String(decoding: json, as: UTF8.self))")
        }
    }

    /// JSON the encoder does not write but JSON allows: whitespace, every escape (surrogate
    /// pairs too), exponents, nulls, and unknown names with nested values, which are skipped.
    @Test func readsAnyJSONOfTheSameAttributesAsJSONDecoder() throws {
        let documents = [
            #" { "service" : "a\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\" , "account":"x" } "#,
            #"{"port":443,"creationDate":1.8e9,"modificationDate":-0.5,"synchronizable":true}"#,
            #"{"accessGroup":null,"label":"\u0000","creator":0,"type":4294967295}"#,
            #"{"future":[1,{"a":[true,false,null]},"s",-2.5e-3],"service":"kept","nested":{"x":{}}}"#,
            #"{"custom":{"b":"2","a":"\u00e9"},"keyClass":"private","accessible":"afterFirstUnlock"}"#,
            #"{"generic":"AQID","accessControl":"userPresence","port":-0}"#,
            "{}",
        ]
        for document in documents {
            let json = Data(document.utf8)
            let expected = try #require(Self.decoded(json), "JSONDecoder refuses \(document)")
            #expect(try StoredAttributesReader.attributes(from: json) == expected, "\(document)")
        }
        #expect(try Self.read(#"{"service":"a\u00e9\ud83d\ude00"}"#).service == "aé😀")
        #expect(try Self.read(#"{"future":{"a":[1]},"account":"kept"}"#).account == "kept")
    }

    /// Anything not an attributes object of the declared types is refused, not guessed at.
    @Test func refusesWhatIsNotAttributes() {
        let refused = [
            "", "[]", "\"s\"", "null", "{", "{\"service\"", "{\"service\":}", "{\"service\":\"a\"", #"{"service":"a",}"#,
            #"{"service":"a"} x"#, #"{"service":"a"}{}"#, #"{service:"a"}"#, #"{"service":'a'}"#,
            #"{"port":"80"}"#, #"{"port":80.5}"#, #"{"port":1e2}"#, #"{"port":08}"#, #"{"port":-}"#, #"{"port":+1}"#,
            #"{"port":99999999999999999999}"#, #"{"creator":-1}"#, #"{"creator":4294967296}"#,
            #"{"synchronizable":1}"#, #"{"synchronizable":"true"}"#, #"{"synchronizable":tru}"#,
            #"{"accessible":"sometimes"}"#, #"{"keyClass":"other"}"#, #"{"generic":"not base64!"}"#,
            #"{"custom":{"a":1}}"#, #"{"custom":{"a":null}}"#, #"{"custom":["a"]}"#, #"{"creationDate":"today"}"#,
            #"{"creationDate":1.}"#, #"{"creationDate":.5}"#, #"{"creationDate":1e}"#,
            #"{"service":"\x"}"#, #"{"service":"\u12"}"#, #"{"service":"\ud800"}"#, #"{"service":"\udc00\udc00"}"#,
            #"{"service":"\ud800\u0041"}"#, "{\"service\":\"a\u{1}\"}", "{\"service\":\"line\nbreak\"}",
            #"{"service":"first","service":"second"}"#, #"{"service":null,"service":"x"}"#, #"{"custom":{"a":"1","a":"2"}}"#,
            #"{"future":[1,]}"#, #"{"future":[1 2]}"#, #"{"future":nul}"#,
            "{\"future\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
        ]
        for document in refused {
            #expect(throws: StoredAttributesReader.Malformed.self, "\(document)") { try Self.read(document) }
        }
        // Bytes that are not UTF-8, in a plain string and in one with escapes.
        for bytes in [[0xFF], [0xC3], [0xED, 0xA0, 0x80]] as [[UInt8]] {
            for prefix in ["{\"service\":\"", "{\"service\":\"\\n"] {
                let json = Data(prefix.utf8) + Data(bytes) + Data("\"}".utf8)
                #expect(throws: StoredAttributesReader.Malformed.self) { try StoredAttributesReader.attributes(from: json) }
                #expect(Self.decoded(json) == nil)
            }
        }
    }

    /// Every prefix of a document is refused, and a byte changed anywhere either is refused or
    /// reads as `JSONDecoder` reads it — never as something else.
    @Test func truncatedAndAlteredDocumentsNeverReadAsSomethingElse() throws {
        let json = try ItemAttributes.encoder.encode(PrimaryKeyTupleTests.everything)
        for end in 0..<json.count {
            #expect(throws: StoredAttributesReader.Malformed.self, "prefix of \(end) bytes") {
                try StoredAttributesReader.attributes(from: json.prefix(end))
            }
        }
        let replacements: [UInt8] = Array("\"\\{}[],:0123456789-+.eEtrufalsn \u{7f}".utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        for index in json.indices {
            for byte in replacements where byte != json[index] {
                var altered = json
                altered[index] = byte
                guard let read = try? StoredAttributesReader.attributes(from: altered) else { continue }
                #expect(read == Self.decoded(altered), "byte \(index) → \(byte): \(String(decoding: altered, as: UTF8.self))")
            }
        }
    }
}
