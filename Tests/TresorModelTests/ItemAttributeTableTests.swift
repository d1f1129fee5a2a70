import Foundation
import Testing
import TresorModel

/// `ItemAttribute.all` is the one declaration of every attribute that the decoders, the keychain's
/// schema, the lookup route and SecItem read: each line must name a property of `ItemAttributes`
/// and read and write that property, not a neighbour's.
@Suite struct ItemAttributeTableTests {
    /// The names of the properties of `attributes` that are set.
    static func setProperties(of attributes: ItemAttributes) -> [String] {
        Mirror(reflecting: attributes).children.compactMap { child in
            guard let label = child.label, Mirror(reflecting: child.value).children.first != nil else { return nil }
            return label
        }
    }

    @Test func everyPropertyHasOneLine() {
        let properties = Mirror(reflecting: ItemAttributes()).children.compactMap(\.label)
        #expect(properties.count == 36)
        #expect(ItemAttribute.all.map(\.name) == properties, "the table lists the properties in their order")
        #expect(ItemAttribute.named.count == ItemAttribute.all.count)
    }

    @Test func eachLineReadsAndWritesItsOwnProperty() throws {
        for attribute in ItemAttribute.all {
            var attributes = ItemAttributes()
            let read: Any?
            switch attribute.value {
            case .text(let get, let set): set(&attributes, "x"); read = get(attributes)
            case .integer(let get, let set): set(&attributes, 7); read = get(attributes)
            case .fourCharCode(let get, let set): set(&attributes, 7); read = get(attributes)
            case .boolean(let get, let set): set(&attributes, true); read = get(attributes)
            case .bytes(let get, let set): set(&attributes, Data([1])); read = get(attributes)
            case .date(let get, let set): set(&attributes, Date(timeIntervalSince1970: 1)); read = get(attributes)
            case .protectionClass(let get, let set): set(&attributes, .always); read = get(attributes)
            case .accessControl(let get, let set): set(&attributes, .userPresence); read = get(attributes)
            case .keyClass(let get, let set): set(&attributes, .symmetric); read = get(attributes)
            case .stringMap(let get, let set): set(&attributes, ["k": "v"]); read = get(attributes)
            }
            #expect(Self.setProperties(of: attributes) == [attribute.name], "\(attribute.name) sets its own property")
            #expect(read != nil, "\(attribute.name) reads what it set")
        }
    }

    @Test func primaryKeysNameAttributesOfTheirClass() throws {
        #expect(Set(ItemAttribute.primaryKey.keys) == Set(ItemClass.allCases))
        for (itemClass, names) in ItemAttribute.primaryKey {
            for name in names {
                let attribute = try #require(ItemAttribute.named[name], "\(name)")
                #expect(attribute.classes.contains(itemClass), "\(name) applies to \(itemClass)")
            }
        }
    }

    @Test func keysAndOptionsAreUnique() {
        let options = ItemAttribute.all.compactMap(\.option)
        #expect(Set(options).count == options.count)
        // Only `type` is shared: a four-character code, but for keys the key type (SecItem picks it for keys).
        var byKey: [String: [ItemAttribute]] = [:]
        for attribute in ItemAttribute.all { if let key = attribute.secItemKey { byKey[key, default: []].append(attribute) } }
        for (key, attributes) in byKey where attributes.count > 1 {
            #expect(key == "type" && attributes.map(\.name) == ["type", "keyType"])
        }
    }
}
