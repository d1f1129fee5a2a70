import FoundationEssentials
import Testing
import TresorModel
import TresorProtocol

/// The answer of `GET /v1/items/attributes` (docs/API.md, "The attributes route"): every
/// attribute of the table comes back as it went, and bytes that are not such an answer — short,
/// trailing, tampered — are a clear error, never a crash or a wrong item.
@Suite("The attributes route's answer")
struct ItemAttributesListTests {
    /// Every attribute of ``ItemAttribute/all`` set, each to a value derived from `seed`.
    static func everyAttribute(_ seed: Int) -> ItemAttributes {
        var attributes = ItemAttributes()
        for attribute in ItemAttribute.all {
            switch attribute.value {
            case .text(_, let set): set(&attributes, "\(attribute.name) \(seed) ünï \u{1F511} \"quoted\"")
            case .integer(_, let set): set(&attributes, seed.isMultiple(of: 2) ? -seed - 1 : Int.max - seed)
            case .fourCharCode(_, let set): set(&attributes, UInt32(0x6170_706C) &+ UInt32(seed))
            case .boolean(_, let set): set(&attributes, seed.isMultiple(of: 2))
            case .bytes(_, let set): set(&attributes, Data((0..<(seed % 40)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed) }))
            case .date(_, let set): set(&attributes, Date(timeIntervalSince1970: 1_795_338_231.204_080_6 + Double(seed)))
            case .protectionClass(_, let set): set(&attributes, ProtectionClass.allCases[seed % ProtectionClass.allCases.count])
            case .accessControl(_, let set): set(&attributes, .userPresence)
            case .keyClass(_, let set): set(&attributes, [.public, .private, .symmetric][seed % 3])
            case .stringMap(_, let set): set(&attributes, ["xdg:schema": "org.example.\(seed)", "": "", "k\(seed)": "ü\u{0}v"])
            }
        }
        return attributes
    }

    @Test func everyAttributeComesBackAsItWent() throws {
        var label = ItemAttributes()
        label.label = "Deploy token"
        let items = [Self.everyAttribute(1), ItemAttributes(), label, Self.everyAttribute(2), Self.everyAttribute(41)]
        let decoded = try ItemAttributesList.decode(Data(ItemAttributesList.encode(items)))
        #expect(decoded == items)
        #expect(try ItemAttributesList.decode(Data(ItemAttributesList.encode([]))) == [])
        // One item with only a label: its bytes, spelt out.
        let expected: [UInt8] = [1, 0, 0, 0, 1, 0, 1, 5] + Array("label".utf8) + [0, 0, 0, 12] + Array("Deploy token".utf8)
        #expect(ItemAttributesList.encode([label]) == expected)
    }

    /// Every strict prefix of an answer is short, and says so.
    @Test func aShortAnswerIsAnError() throws {
        let bytes = ItemAttributesList.encode([Self.everyAttribute(3), Self.everyAttribute(4)])
        for length in 0..<bytes.count {
            #expect(throws: ItemAttributesList.Malformed.self, "\(length) of \(bytes.count) bytes") {
                try ItemAttributesList.decode(Data(bytes.prefix(length)))
            }
        }
    }

    @Test func tamperedAnswersAreErrors() throws {
        var label = ItemAttributes()
        label.label = "x"
        let plain = ItemAttributesList.encode([label])
        func refused(_ bytes: [UInt8], _ why: String) {
            #expect(throws: ItemAttributesList.Malformed.self, "\(why)") { try ItemAttributesList.decode(Data(bytes)) }
        }
        refused(plain + [0], "a byte after the last item")
        refused([2] + plain.dropFirst(), "another version")
        refused([1, 0xFF, 0xFF, 0xFF, 0xFF], "four billion items announced in no bytes")
        // `label` twice in one item.
        let member = Array(plain[7...])
        refused([1, 0, 0, 0, 1, 0, 2] + member + member, "a name twice")
        refused(Array(plain.dropLast()) + [0xFF], "text that is not UTF-8")
        func one(_ name: String, _ value: [UInt8]) -> [UInt8] {
            [1, 0, 0, 0, 1, 0, 1, UInt8(name.utf8.count)] + Array(name.utf8) + withUnsafeBytes(of: UInt32(value.count).bigEndian) { Array($0) }
                + value
        }
        refused(one("readableByScripts", [2]), "a boolean that is 2")
        refused(one("port", [0, 0, 0, 1]), "an integer of 4 bytes")
        refused(one("creator", [0, 0, 1]), "a four-character code of 3 bytes")
        refused(one("creationDate", withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Array($0) }), "a date that is not a number")
        refused(one("accessible", Array("sometimes".utf8)), "a protection class that does not exist")
        refused(one("custom", [0, 0, 0, 1, 0x41, 0, 0, 0, 9]), "a free-form value longer than its attribute")
        refused(one("custom", [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), "a free-form key twice")
        // What a tampered answer never does is crash: every byte flipped in turn.
        let full = ItemAttributesList.encode([Self.everyAttribute(5)])
        var refusals = 0
        for index in full.indices {
            var flipped = full
            flipped[index] ^= 0xFF
            if (try? ItemAttributesList.decode(Data(flipped))) == nil { refusals += 1 }
        }
        #expect(refusals > 0)
    }

    /// A name this side does not know (a newer daemon's attribute) is skipped by its length.
    @Test func anUnknownAttributeIsSkipped() throws {
        var label = ItemAttributes()
        label.label = "kept"
        let known = Array(ItemAttributesList.encode([label])[7...])
        let unknown: [UInt8] = [8] + Array("newThing".utf8) + [0, 0, 0, 3, 1, 2, 3]
        #expect(try ItemAttributesList.decode(Data([1, 0, 0, 0, 1, 0, 2] + unknown + known)) == [label])
    }
}
