import Crypto
import Foundation
import TresorCrypto

/// The two-key encryption of one keychain (docs/ARCHITECTURE.md, "TresorKeychain"): each item's
/// secret sealed under its own row key, the row key wrapped by the class key, the other attributes
/// sealed under a metadata key per (item class, protection class), and HMAC blind indexes for
/// lookups.
struct ItemSealing {
    static let formatVersion = "v1"

    let keychainName: String
    /// Derived from the `alwaysThisDeviceOnly` class key, so lookups work in every lock state
    /// without revealing anything but equality.
    let indexKey: PreparedHMACKey

    /// Binds a ciphertext to its keychain, table, row and column, so it cannot be moved.
    func associatedData(_ itemClass: ItemClass, id: Int64, column: String) -> Data {
        Data("tresor.keychain.\(Self.formatVersion)/\(keychainName)/\(itemClass.table)/\(id)/\(column)".utf8)
    }

    func primaryKeyTag(_ attributes: AttributeValues, itemClass: ItemClass) -> Data {
        indexKey.authenticationCode(for: Data("pk\0".utf8) + attributes.primaryKeyTuple(for: itemClass))
    }

    /// The primary key without the access group: one tag finds an item in whichever group it
    /// is, for a caller that sees every group (the `tresor` CLI) and names none.
    func lookupTag(_ attributes: AttributeValues, itemClass: ItemClass) -> Data {
        indexKey.authenticationCode(for: Data("lookup\0".utf8) + attributes.primaryKeyTuple(for: itemClass, includingGroup: false))
    }

    func groupTag(_ group: String) -> Data {
        indexKey.authenticationCode(for: Data("group\0".utf8) + Data(group.utf8))
    }

    /// One tag per name=value pair of a custom attribute map (`custom_attribute_tags`), so a
    /// search by some of its pairs finds its items without opening the others.
    func customAttributeTags(_ custom: [String: String]?, itemClass: ItemClass) -> [Data] {
        (custom ?? [:]).map { customAttributeTag(name: $0.key, value: $0.value, itemClass: itemClass) }
    }

    /// Every tag a row is found by in `custom_attribute_tags`: one per pair of its free-form map
    /// and one per ``ItemAttribute/Rules/searchable`` attribute it has. For a query's values,
    /// the tags its matches all hold (empty when it names none of those attributes).
    func attributeTags(_ values: AttributeValues, itemClass: ItemClass) -> [Data] {
        var tags = customAttributeTags(values.values["custom"] as? [String: String], itemClass: itemClass)
        for attribute in ItemAttribute.searchable where attribute.classes.contains(itemClass) {
            if let value = values.values[attribute.name] { tags.append(attributeTag(name: attribute.name, value: value, itemClass: itemClass)) }
        }
        return tags
    }

    /// The tag of one searchable attribute's value: HMAC over the class, the name and the value
    /// as its one-element JSON array (strings by their UTF-8 bytes, as a search compares them).
    /// A name never holds a NUL, and the array's brackets end the value: no two inputs collide.
    func attributeTag(name: String, value: Any, itemClass: ItemClass) -> Data {
        let encoded = AttributeValues.jsonArray([value]) ?? AttributeValues.canonical(value) ?? Data()
        return indexKey.authenticationCode(for: Data("attribute\0\(itemClass.table)\0\(name)\0".utf8) + encoded)
    }

    /// The class is part of the input, so equal pairs in two classes do not show as equal.
    /// Name and value are each preceded by their UTF-8 length: no other split of the same bytes
    /// (`"a=b" → "c"` and `"a" → "b=c"`, or any separator inside a name) gives the same input.
    func customAttributeTag(name: String, value: String, itemClass: ItemClass) -> Data {
        var input = Data("custom\0\(itemClass.table)\0".utf8)
        for part in [name, value] {
            withUnsafeBytes(of: UInt64(part.utf8.count).bigEndian) { input.append(contentsOf: $0) }
            input.append(contentsOf: part.utf8)
        }
        return indexKey.authenticationCode(for: input)
    }

    func sealMetadata(_ attributes: ItemAttributes, itemClass: ItemClass, id: Int64, key: SymmetricKey) throws -> Data {
        let json = try ItemAttributes.encoder.encode(attributes)
        return try Envelope.seal(json, using: key, authenticating: associatedData(itemClass, id: id, column: "metadata"))
    }

    /// The item's attributes as the JSON they were sealed as.
    func openMetadataJSON(_ stored: StoredItem, itemClass: ItemClass, key: SymmetricKey) throws -> Data {
        do {
            return try Envelope.open(stored.metadata, using: key, authenticating: associatedData(itemClass, id: stored.id, column: "metadata"))
        } catch {
            throw Self.damagedAttributes(of: stored.id)
        }
    }

    func decodeMetadata(_ json: Data, of stored: StoredItem) throws -> ItemAttributes {
        do {
            return try StoredAttributesReader.attributes(from: json)
        } catch {
            throw Self.damagedAttributes(of: stored.id)
        }
    }

    static func damagedAttributes(of id: Int64) -> KeychainError {
        KeychainError.decode("the attributes of item \(id) are damaged or were altered")
    }

    func sealSecret(_ secret: Data, itemClass: ItemClass, id: Int64, rowKey: SymmetricKey) throws -> Data {
        try Envelope.seal(secret, using: rowKey, authenticating: associatedData(itemClass, id: id, column: "secret"))
    }

    func openSecret(_ stored: StoredItem, itemClass: ItemClass, classKey: SymmetricKey) throws -> Data {
        do {
            let rowKey = try KeyWrap.unwrap(stored.rowKey, using: classKey)
            return try Envelope.open(stored.secret, using: rowKey, authenticating: associatedData(itemClass, id: stored.id, column: "secret"))
        } catch {
            throw KeychainError.decode("the secret of item \(stored.id) is damaged or was altered")
        }
    }
}
