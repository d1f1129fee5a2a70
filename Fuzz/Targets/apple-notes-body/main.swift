// Fuzzes AppleNoteBody.text and .markdown (TresorAppleNotes): the bounded gunzip of an Apple
// Notes note body (CompressNIO's zlib, one window at a time), the SwiftProtobuf decoding of
// field path 2 → 3 → 2 with a depth limit, and the attribute runs read into Tresor Markdown
// (AppleNoteFormatting's wire reader). Bodies come from hostile NoteStore files and, for locked
// notes, from whatever a passphrase decrypts.
//
// Input: mode byte | payload
//   mode bit 0: 0 = the payload is the body as stored (gzip, fuzzed byte for byte);
//               1 = the payload is the protobuf, which the harness wraps in a valid gzip
//                   member (stored blocks and a correct CRC), so mutations reach the decoder
//
// Properties besides "never crash": every error is damagedBody or tooLarge; a text is never
// larger than the inflate bound; a valid gzip wrapper never yields a gzip error; a slice and a
// copy of the same bytes give the same outcome; the Markdown reading fails exactly when the text
// reading does.
import Foundation
import FuzzSupport
import TresorAppleNotes

/// Bombs stop fast at 1 MiB, far above any seed.
let limits = AppleNotesLimits(maxDecompressedBytes: 1 << 20, maxProtobufDepth: 32)

/// CRC-32 (IEEE 802.3), as gzip's trailer uses.
let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
    return value
}

func crc32(_ bytes: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    return crc ^ 0xFFFF_FFFF
}

func littleEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

/// A gzip member holding `bytes` in deflate stored blocks: valid whatever the bytes.
func gzipStored(_ bytes: Data) -> Data {
    var out = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
    var rest = bytes[...]
    repeat {
        let block = rest.prefix(65_535)
        rest = rest.dropFirst(block.count)
        let length = UInt16(block.count)
        out.append(rest.isEmpty ? 1 : 0)
        out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
        out += block
    } while !rest.isEmpty
    out += littleEndian(crc32(bytes)) + littleEndian(UInt32(truncatingIfNeeded: bytes.count))
    return out
}

// Protobuf pieces for the seeds.
func varint(_ value: Int) -> Data {
    var value = UInt64(value)
    var out = Data()
    repeat {
        out.append(UInt8(value & 0x7F) | (value > 0x7F ? 0x80 : 0))
        value >>= 7
    } while value != 0
    return out
}

func field(_ number: Int, _ bytes: Data) -> Data { varint(number << 3 | 2) + varint(bytes.count) + bytes }

func noteStore(_ note: Data) -> Data { field(2, varint(2 << 3) + varint(0) + field(3, note)) }

func seeds() throws -> [String: Data] {
    let run = field(5, varint(1 << 3) + varint(5) + field(2, varint(1 << 3) + varint(3)))
    // A checklist item, done, in bold with a link: the runs the Markdown reading follows.
    let styled = field(
        5,
        varint(1 << 3) + varint(4) + field(2, varint(1 << 3) + varint(103) + field(5, varint(2 << 3) + varint(1)))
            + varint(5 << 3) + varint(1) + field(9, Data("https://example.org".utf8)))
    let plain = noteStore(field(2, Data("Groceries\nmilk\neggs".utf8)) + run)
    let unicode = noteStore(field(2, Data("Ünïcødé ✓ 📝 \u{FFFC}".utf8)) + run + run)
    let group = noteStore(field(2, Data("g".utf8)) + Data([0x7B, 0x08, 0x01, 0x7C]))
    let noText = noteStore(field(3, Data("x".utf8)))
    let badUTF8 = noteStore(field(2, Data([0x61, 0xFF, 0x62])))
    let formatted = noteStore(field(2, Data("Todo\n*x* [y]".utf8)) + styled + run)
    return [
        "stored-plain": Data([0]) + gzipStored(plain),
        "stored-unicode": Data([0]) + gzipStored(unicode),
        "wrapped-plain": Data([1]) + plain,
        "wrapped-unicode": Data([1]) + unicode,
        "wrapped-group": Data([1]) + group,
        "wrapped-no-text": Data([1]) + noText,
        "wrapped-bad-utf8": Data([1]) + badUTF8,
        "wrapped-empty": Data([1]),
        "wrapped-formatted": Data([1]) + formatted,
    ]
}

/// The outcome of one decode, comparable between a slice and a copy.
enum Outcome: Equatable {
    case text(String)
    case failed(AppleNotesError)
}

func decode(_ body: Data) -> Outcome {
    do {
        return .text(try AppleNoteBody.text(fromGzippedProtobuf: body, limits: limits))
    } catch let error as AppleNotesError {
        return .failed(error)
    } catch {
        fuzzFailure("AppleNoteBody threw something other than an AppleNotesError: \(error)")
    }
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(data)
    let mode = input.byte() & 1
    let payload = input.rest
    let body = mode == 0 ? payload : gzipStored(payload)

    let outcome = decode(body)
    switch outcome {
    case .text(let text):
        guard text.utf8.count <= limits.maxDecompressedBytes else {
            fuzzFailure("a text of \(text.utf8.count) bytes passed the \(limits.maxDecompressedBytes)-byte bound")
        }
    case .failed(.damagedBody(let message)):
        if mode == 1, message.contains("gzip") {
            fuzzFailure("a valid gzip wrapper gave a gzip error: \(message)")
        }
    case .failed(.tooLarge):
        break
    case .failed(let error):
        fuzzFailure("AppleNoteBody failed with an unexpected kind of error: \(error)")
    }
    guard decode(Data(body)) == outcome else { fuzzFailure("a slice and a copy of the same body decode differently") }
    let markdown = Result { try AppleNoteBody.markdown(fromGzippedProtobuf: body, limits: limits) }
    switch (outcome, markdown) {
    case (.text, .success), (.failed, .failure): break
    default: fuzzFailure("the Markdown reading and the text reading disagree on whether the body is readable")
    }
}
