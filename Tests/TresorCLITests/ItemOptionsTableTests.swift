import ArgumentParser
import Testing
import TresorModel

@testable import tresor

/// The `tresor item` attribute options are the options `ItemAttribute.all` declares: an attribute
/// given an option in the table must get its `@Option` in `ItemOptions`, and no option may set an
/// attribute the table does not know it for.
@Suite struct ItemOptionsTableTests {
    @Test func theAttributeOptionsAreTheTablesOptions() {
        let help = ItemOptions.helpMessage(columns: 1000)
        let options = Set(help.split(whereSeparator: { " ,\n".contains($0) }).filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) })
        // Not attributes: which class, which item, which keychain, and help.
        #expect(options.subtracting(["class", "id", "keychain", "help"]) == Set(ItemAttribute.all.compactMap(\.option)))
    }

    @Test func eachOptionSetsItsAttribute() throws {
        for attribute in ItemAttribute.all {
            guard let option = attribute.option else { continue }
            let value: String
            switch attribute.value {
            case .integer: value = "7"
            case .protectionClass: value = "always"
            case .keyClass: value = "symmetric"
            case .stringMap: value = "k=v"
            default: value = "x"
            }
            // A boolean's option is a flag: given, it sets the attribute to true.
            let arguments = if case .boolean = attribute.value { ["--\(option)"] } else { ["--\(option)", value] }
            let parsed = try ItemOptions.parse(arguments)
            let names = try parsed.attributes.setNames
            #expect(names == [attribute.name], "--\(option) sets \(attribute.name)")
        }
    }
}

extension ItemAttributes {
    /// The names of the properties that are set.
    fileprivate var setNames: [String] {
        Mirror(reflecting: self).children.compactMap { child in
            guard let label = child.label, Mirror(reflecting: child.value).children.first != nil else { return nil }
            return label
        }
    }
}
