import ArgumentParser
import Testing
import TresorModel

@testable import tresor

/// `tresor item get` is read twice over: by swift-argument-parser, and for its plain forms by
/// `SecretLookup(commandLine:)` without it. Both must give the same lookup, and everything the
/// short reader does not know must be left to the parser.
@Suite("Reading `tresor item get`")
struct SecretLookupTests {
    /// What swift-argument-parser makes of `words`, as `tresor` runs it.
    private func parsed(_ words: [String]) throws -> SecretLookup {
        let command = try Tresor.parseAsRoot(CommandLineWords.arranged(words))
        let get = try #require(command as? ItemCommand.Get, "\(words)")
        return try get.lookup
    }

    @Test(arguments: [
        ["item", "get", "--service", "github.com", "--account", "ada"],
        ["item", "get", "--account", "ada", "--service", "github.com", "--group", "tresor"],
        ["item", "get", "--home", "/tmp/h", "--service", "s", "--account", "a"],
        ["--home", "/tmp/h", "item", "get", "--service", "s"],
        ["item", "--verbose", "get", "--service", "s", "--first"],
        ["item", "get", "--id", "12345", "--keychain", "work", "--passcode-stdin"],
        ["item", "get", "--service", "with space", "--account", "ünïcode=1"],
        ["item", "get", "--service", ""],
        ["item", "get"],
    ])
    func plainFormsReadAsTheParserReadsThem(words: [String]) throws {
        let short = try #require(SecretLookup(commandLine: words), "\(words)")
        #expect(short == (try parsed(words)))
        #expect(short.query.limit == .one && short.query.returnData && short.query.itemClass == .genericPassword)
    }

    @Test func theValuesLandWhereTheyBelong() throws {
        let lookup = try #require(
            SecretLookup(commandLine: [
                "item", "get", "--service", "S", "--account", "A", "--group", "G", "--keychain", "K", "--home", "H", "--first", "--verbose",
            ]))
        #expect(lookup.query.attributes.service == "S" && lookup.query.attributes.account == "A" && lookup.query.attributes.accessGroup == "G")
        #expect(lookup.keychain == "K" && lookup.home == "H" && lookup.first && lookup.verbose && !lookup.passcodeStdin && !lookup.clip)
        #expect(lookup.query.id == nil)
    }

    @Test(arguments: [
        ["item", "get", "--service", "s", "--json"],  // JSON: the parser's path
        ["item", "get", "--service", "s", "--clip"],
        ["item", "get", "--service=s"],
        ["item", "get", "--service", "s", "--service", "t"],  // twice
        ["item", "get", "--service", "-"],  // asked for
        ["item", "get", "--service", "--account", "a"],  // a missing value
        ["item", "get", "--label", "x"],
        ["item", "get", "--class", "inet", "--server", "x"],
        ["item", "get", "--help"],
        ["item", "get", "extra"],
        ["item", "get", "--", "--service"],
        ["item", "find", "--service", "s"],
        ["item", "--service", "s", "get"],  // an item option before `get`
        ["get", "item"],
        ["note", "get"],
        ["--version"],
        [],
    ])
    func everythingElseIsLeftToTheParser(words: [String]) {
        #expect(SecretLookup(commandLine: words) == nil, "\(words)")
    }
}
