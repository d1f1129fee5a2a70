import Foundation
import NoteStoreFixture
import Testing
import TresorAppleNotes

/// AppleNoteBody: gunzip (bounded) then protobuf field path 2 → 3 → 2, on good and hostile bodies.
@Suite struct AppleNoteBodyTests {
    /// Whether `body` throws `damagedBody` whose message contains `words`.
    func expectDamaged(_ body: Data, _ words: String, limits: AppleNotesLimits = .default, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let text = try AppleNoteBody.text(fromGzippedProtobuf: body, limits: limits)
            Issue.record("expected a damaged body, read \(text.count) characters", sourceLocation: sourceLocation)
        } catch let AppleNotesError.damagedBody(message) {
            #expect(message.contains(words), "message: \(message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected damagedBody, got \(error)", sourceLocation: sourceLocation)
        }
    }

    static let texts = [
        "plain": "Groceries\n\nmilk, eggs", "empty": "", "unicode": "ünïcødé ✓ 📝\u{FFFC} attachment",
        "long": String(repeating: "line\n", count: 20_000),
    ]

    @Test(arguments: texts.keys.sorted())
    func readsTheTextOfAGzippedProtobuf(name: String) throws {
        let text = try #require(Self.texts[name])
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: Gzip.noteBody(text)) == text)
    }

    @Test func readsABodyGivenAsASliceOfLargerData() throws {
        let body = try Gzip.noteBody("in a slice")
        let framed = Data([9, 9, 9]) + body + Data([9])
        let slice = framed[3..<(3 + body.count)]
        #expect(slice.startIndex == 3)
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: slice) == "in a slice")
    }

    @Test func ignoresUnknownFieldsAtEveryLevel() throws {
        // Unknown fields before and after the known ones, every wire type, and a group.
        let unknown =
            Protobuf.field(1, varint: 300) + Protobuf.field(7, Array("x".utf8))
            + Protobuf.tag(11, wireType: 3) + Protobuf.field(1, varint: 1) + Protobuf.tag(11, wireType: 4)
            + Protobuf.tag(12, wireType: 5) + [0, 0, 0, 0]
        let note = unknown + Protobuf.field(2, Array("hello".utf8)) + unknown
        let document = unknown + Protobuf.field(3, note) + unknown
        let store = unknown + Protobuf.field(2, document) + unknown
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: Gzip.compress(store)) == "hello")
    }

    @Test func aGzipBombStopsAtTheLimit() throws {
        let limits = AppleNotesLimits.default
        let bomb = try Gzip.zeros(count: limits.maxDecompressedBytes + 1)
        #expect(bomb.count < 100_000)  // small input…
        // …refused as too large: inflating stopped one byte past the limit.
        #expect {
            try AppleNoteBody.text(fromGzippedProtobuf: bomb, limits: limits)
        } throws: { error in
            guard case AppleNotesError.tooLarge = error else { return false }
            return true
        }
        // Exactly at the limit it inflates (and then is no protobuf).
        let atLimit = try Gzip.zeros(count: 1 << 20)
        var small = AppleNotesLimits.default
        small.maxDecompressedBytes = 1 << 20
        expectDamaged(atLimit, "protobuf", limits: small)
        small.maxDecompressedBytes = (1 << 20) - 1
        #expect(throws: AppleNotesError.tooLarge("the note body inflates to more than \((1 << 20) - 1) bytes")) {
            try AppleNoteBody.text(fromGzippedProtobuf: atLimit, limits: small)
        }
    }

    @Test func storedBodiesOverTheLimitAreRefusedBeforeInflating() throws {
        let body = try Gzip.noteBody("fine")
        var limits = AppleNotesLimits.default
        limits.maxNoteDataBytes = body.count - 1
        #expect(throws: AppleNotesError.tooLarge("the note body is \(body.count) bytes, more than \(body.count - 1)")) {
            try AppleNoteBody.text(fromGzippedProtobuf: body, limits: limits)
        }
        limits.maxNoteDataBytes = body.count
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: body, limits: limits) == "fine")
    }

    @Test func everyTruncationIsDamaged() throws {
        let body = try Gzip.noteBody("The whole text of a note that will be cut short.")
        for length in 0..<body.count {
            #expect(throws: AppleNotesError.self) { try AppleNoteBody.text(fromGzippedProtobuf: body.prefix(length)) }
        }
        expectDamaged(body.dropLast(1), "truncated gzip")  // the size field of the trailer
        expectDamaged(body.prefix(body.count / 2), "truncated gzip")
        expectDamaged(body.prefix(0), "empty")
    }

    @Test func corruptAndTrailingBytesAreDamaged() throws {
        let body = try Gzip.noteBody("checksummed text")
        var crc = body
        crc[crc.count - 6] ^= 0x01  // the CRC-32 of the trailer
        expectDamaged(crc, "corrupt gzip")
        var size = body
        size[size.count - 2] ^= 0x01  // the length of the trailer
        expectDamaged(size, "corrupt gzip")
        expectDamaged(body + Data([0]), "1 bytes follow the end")
        expectDamaged(body + body, "follow the end")
        var method = body
        method[2] = 7  // compression method other than deflate
        expectDamaged(method, "gzip")
    }

    @Test func dataThatIsNotGzipIsDamaged() throws {
        let protobuf = Data(Protobuf.noteStore(text: "raw protobuf, not gzipped"))
        expectDamaged(protobuf, "not gzip data")
        expectDamaged(Data("SQLite format 3\0".utf8), "not gzip data")
        expectDamaged(Data([0x1F]), "not gzip data")
        expectDamaged(Data([0x1F, 0x8B]), "truncated gzip")
        expectDamaged(Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]), "not gzip data")  // zlib, not gzip
    }

    @Test func malformedProtobufsAreDamaged() throws {
        // A varint of eleven continuation bytes.
        expectDamaged(try Gzip.compress([0x10] + Array(repeating: 0xFF, count: 11)), "protobuf")
        // A length past the end, at each level.
        expectDamaged(try Gzip.compress(Protobuf.tag(2, wireType: 2) + Protobuf.varint(100) + [0x1A, 0x00]), "truncated protobuf")
        let note = Protobuf.tag(2, wireType: 2) + Protobuf.varint(1000) + Array("short".utf8)
        expectDamaged(try Gzip.compress(Protobuf.field(2, Protobuf.field(3, note))), "truncated protobuf")
        // Field 2 with the wrong wire type (a varint where a message belongs).
        expectDamaged(try Gzip.compress(Protobuf.field(2, varint: 5)), "protobuf")
        // An end-group tag with no group, and field number 0.
        expectDamaged(try Gzip.compress(Protobuf.tag(4, wireType: 4)), "protobuf")
        expectDamaged(try Gzip.compress([0x02, 0x00]), "protobuf")
        // Wire types 6 and 7 do not exist.
        expectDamaged(try Gzip.compress([0x0E]), "protobuf")
    }

    @Test func deepNestingStopsAtTheDepthLimit() throws {
        // Unknown groups nested 200 deep inside the note message.
        func nested(_ depth: Int) -> [UInt8] {
            let open = Array(repeating: Protobuf.tag(15, wireType: 3), count: depth).flatMap { $0 }
            let close = Array(repeating: Protobuf.tag(15, wireType: 4), count: depth).flatMap { $0 }
            let note = Protobuf.field(2, Array("deep".utf8)) + open + close
            return Protobuf.field(2, Protobuf.field(3, note))
        }
        expectDamaged(try Gzip.compress(nested(200)), "too deeply")
        var limits = AppleNotesLimits.default
        limits.maxProtobufDepth = 8
        expectDamaged(try Gzip.compress(nested(8)), "too deeply", limits: limits)
        #expect(try AppleNoteBody.text(fromGzippedProtobuf: Gzip.compress(nested(4)), limits: limits) == "deep")
        // A million nested groups is refused too, without exhausting the stack.
        expectDamaged(try Gzip.compress(nested(1_000_000)), "too deeply")
    }

    @Test func aProtobufWithoutThePath2To3To2IsDamaged() throws {
        expectDamaged(try Gzip.compress([]), "no document (field 2)")
        expectDamaged(try Gzip.compress(Protobuf.field(1, Protobuf.field(3, Protobuf.field(2, Array("x".utf8))))), "no document (field 2)")
        expectDamaged(try Gzip.compress(Protobuf.field(2, Protobuf.field(2, varint: 1))), "no note (field 2 → 3)")
        expectDamaged(try Gzip.compress(Protobuf.field(2, Protobuf.field(3, Protobuf.field(3, Array("x".utf8))))), "no text (field 2 → 3 → 2)")
    }

    @Test func textThatIsNotUTF8IsDamaged() throws {
        for bytes: [UInt8] in [[0xFF, 0xFE], Array("ok".utf8) + [0xC3], [0xED, 0xA0, 0x80], [0xC0, 0x80]] {
            expectDamaged(try Gzip.compress(Protobuf.noteStore(textBytes: bytes)), "not valid UTF-8")
        }
    }

    @Test func errorMessagesNeverContainTheText() throws {
        let secret = "SECRET-\(UUID().uuidString)"
        let bodies = [
            try Gzip.compress(Protobuf.noteStore(text: secret) + [0xFF]),
            try Gzip.noteBody(secret).dropLast(3),
            try Gzip.noteBody(secret) + Data(secret.utf8),
            Data(secret.utf8),
        ]
        for body in bodies {
            do {
                _ = try AppleNoteBody.text(fromGzippedProtobuf: body)
                Issue.record("a damaged body was read")
            } catch {
                #expect(!"\(error)".contains(secret))
                #expect(!String(reflecting: error).contains(secret))
            }
        }
    }
}
