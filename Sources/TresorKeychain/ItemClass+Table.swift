import TresorModel

extension ItemClass {
    /// The table holding items of this class, named as in Apple's keychain database.
    var table: String { rawValue }
}
