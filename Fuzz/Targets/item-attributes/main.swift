// Fuzzes ItemAttributesList.decode (TresorProtocol), the parser of `GET /v1/items/attributes`'s
// answer: the bytes TresorKit and the CLI read from the daemon for a find by label (docs/API.md,
// "The attributes route").
//
// Properties besides "never crash":
//  - every refusal is `ItemAttributesList.Malformed`;
//  - a slice and a copy of the same bytes decode alike;
//  - an accepted answer, written again with `encode`, reads back to the same attributes (a date
//    to within a microsecond: seconds since 1970 in a double, kept as seconds since 2001), and
//    that answer cut by its last byte, or with a byte more, is refused.
//
// Input: the answer's bytes, as the daemon would send them.
import Foundation
import FuzzSupport
import TresorModel
import TresorProtocol

/// Every attribute set, each to a value derived from `seed` (as the unit tests' full item).
func everyAttribute(_ seed: Int) -> ItemAttributes {
    var attributes = ItemAttributes()
    for attribute in ItemAttribute.all {
        switch attribute.value {
        case .text(_, let set): set(&attributes, "\(attribute.name) \(seed) ünï 🔑")
        case .integer(_, let set): set(&attributes, seed.isMultiple(of: 2) ? -seed - 1 : Int.max - seed)
        case .fourCharCode(_, let set): set(&attributes, 0x6170_706C &+ UInt32(seed))
        case .boolean(_, let set): set(&attributes, seed.isMultiple(of: 2))
        case .bytes(_, let set): set(&attributes, Data((0..<(seed % 40)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ seed) }))
        case .date(_, let set): set(&attributes, Date(timeIntervalSince1970: 1_795_338_231.25 + Double(seed)))
        case .protectionClass(_, let set): set(&attributes, ProtectionClass.allCases[seed % ProtectionClass.allCases.count])
        case .accessControl(_, let set): set(&attributes, .userPresence)
        case .keyClass(_, let set): set(&attributes, [.public, .private, .symmetric][seed % 3])
        case .stringMap(_, let set): set(&attributes, ["team": "ops \(seed)", "": "empty key"])
        }
    }
    return attributes
}

func seeds() throws -> [String: Data] {
    var label = ItemAttributes()
    label.label = "Deploy token"
    var service = ItemAttributes()
    service.service = "git.example.org"
    service.account = "ada"
    service.synchronizable = true
    return [
        "none": Data(ItemAttributesList.encode([])),
        "label": Data(ItemAttributesList.encode([label])),
        "service-account": Data(ItemAttributesList.encode([service, label])),
        "every-attribute": Data(ItemAttributesList.encode([everyAttribute(3), everyAttribute(4)])),
        // A name this side does not know, skipped by its length.
        "unknown-name": Data([1, 0, 0, 0, 1, 0, 1, 7] + Array("unknown".utf8) + [0, 0, 0, 2, 0x61, 0x62]),
    ]
}

/// `attributes` with every date set to `other`'s where the two are within a microsecond.
func datesAligned(_ attributes: ItemAttributes, to other: ItemAttributes) -> ItemAttributes {
    var aligned = attributes
    for attribute in ItemAttribute.all {
        guard case .date(let get, let set) = attribute.value, let mine = get(aligned), let theirs = get(other) else { continue }
        if abs(mine.timeIntervalSince1970 - theirs.timeIntervalSince1970) <= 1e-6 * max(1, abs(theirs.timeIntervalSince1970)) {
            set(&aligned, theirs)
        }
    }
    return aligned
}

func decoded(_ bytes: Data) -> Result<[ItemAttributes], ItemAttributesList.Malformed> {
    do {
        return .success(try ItemAttributesList.decode(bytes))
    } catch let malformed as ItemAttributesList.Malformed {
        return .failure(malformed)
    } catch {
        fuzzFailure("a refusal that is not Malformed: \(error)")
    }
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(Data([0]) + data)
    _ = input.byte()
    let slice = input.rest  // the same bytes, at indices that do not start at 0
    let fromSlice = decoded(slice), fromCopy = decoded(Data(data))
    switch (fromSlice, fromCopy) {
    case (.success(let a), .success(let b)) where a == b: break
    case (.failure, .failure): break
    default: fuzzFailure("a slice and a copy decode differently")
    }
    guard case .success(let items) = fromCopy else { return }

    let again = ItemAttributesList.encode(items)
    guard case .success(let reread) = decoded(Data(again)) else { fuzzFailure("what encode wrote is refused") }
    guard reread.count == items.count, zip(reread, items).allSatisfy({ datesAligned($0, to: $1) == $1 }) else {
        fuzzFailure("what encode wrote reads back to other attributes")
    }
    if case .success = decoded(Data(again.dropLast())) { fuzzFailure("an answer cut by its last byte is accepted") }
    if case .success = decoded(Data(again + [0])) { fuzzFailure("an answer with a byte more is accepted") }
}
