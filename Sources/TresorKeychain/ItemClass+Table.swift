import TresorModel

extension ItemClass {
    /// The table holding items of this class, named as in Apple's keychain database.
    var table: String { rawValue }

    /// The statement reading the item of one primary-key tag — the common lookup — written
    /// once per class: building and hashing a new string each time showed in its profile.
    var primaryKeyLookup: String { Self.primaryKeyLookups[self]! }

    private static let primaryKeyLookups = Dictionary(
        uniqueKeysWithValues: allCases.map { itemClass in
            (itemClass, "SELECT \(StoredItem.selection) FROM \(itemClass.table) WHERE primary_key_tag = ?")
        })
}
