import FoundationEssentials
import TresorKit
import TresorModel

/// What `tresor item get` does once its command line is read: print the one matching item's
/// secret (or copy it with `--clip`).
///
/// A fast path (docs/ARCHITECTURE.md, "Fast paths and their twins"). Read two ways to the same
/// value: by swift-argument-parser (``ItemCommand/Get``), and for the command line scripts run most — `item get` with `--service`, `--account`, `--id`,
/// `--keychain`, `--group`, `--first`, `--passcode-stdin`, `--home`, `--verbose` — by
/// ``init(commandLine:)`` without it: building the command tree by reflection was most of what a
/// lookup's process did (BENCHMARKS.md, "One `tresor item get` process"). Any other word
/// leaves the command line to swift-argument-parser; `SecretLookupTests` holds both readers to
/// the same result.
struct SecretLookup: Equatable {
    var home: String?
    var verbose = false
    var keychain: String?
    var query: ItemQuery
    /// `--first`: when several items match, the first one's secret instead of an error.
    var first = false
    var passcodeStdin = false
    var clip = false
}

// In an extension, so that the memberwise initializer ``ItemCommand/Get`` uses stays synthesized.
extension SecretLookup {
    /// Reads `tresor item get` with plain options only.
    /// - Parameter words: the command line without the program's name.
    /// - Returns: nil for anything else — another command, an option not listed above, one
    ///   given twice or as `--name=value`, a value that starts with `-` (asked for, or an option),
    ///   `--` — which swift-argument-parser then reads (and explains, when it is wrong).
    init?(commandLine words: [String]) {
        var commands: [String] = []
        var attributes = ItemAttributes()
        var id: String?
        // An array: a process's first Set or Dictionary of a type builds its metadata at start
        // (BENCHMARKS.md, "One `tresor item get` process").
        var seen: [String] = []
        var index = words.startIndex
        while index < words.endIndex {
            let word = words[index]
            index += 1
            guard word.hasPrefix("-") else {
                guard commands.count < 2 else { return nil }
                commands.append(word)
                continue
            }
            // Each option once, item options after `item get` (where the parser takes them).
            guard !seen.contains(word), word == "--home" || word == "--verbose" || commands.count == 2 else { return nil }
            switch word {
            case "--verbose": verbose = true
            case "--first": first = true
            case "--passcode-stdin": passcodeStdin = true
            case "--home", "--service", "--account", "--id", "--keychain", "--group":
                guard index < words.endIndex, !words[index].hasPrefix("-") else { return nil }
                let value = words[index]
                index += 1
                switch word {
                case "--home": home = value
                case "--service": attributes.service = value
                case "--account": attributes.account = value
                case "--id": id = value
                case "--keychain": keychain = value
                default: attributes.accessGroup = value
                }
            default: return nil
            }
            seen.append(word)
        }
        guard commands == ["item", "get"] else { return nil }
        query = ItemQuery(.genericPassword, attributes: attributes, id: id, limit: .one, returnData: true)
    }

    /// Prints the secret, alone (a newline after it on a terminal), or copies it.
    /// - Throws: the daemon's refusal; `ValidationError` listing the candidates when several
    ///   items match and `first` is not set.
    func run() throws {
        if clip { _ = try Clipboard.current() }
        let keychain = try GlobalOptions.keychain(home: home, named: keychain)
        var query = query
        // The lookup route (no JSON either way), as applications' lookups take it — asking the
        // daemon for the one item the query names, in one request.
        let unique = !first && query.id == nil
        let secret: Data
        do {
            secret = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in
                try unique ? keychain.onlySecret(query, passcode: passcode) : keychain.secret(query, passcode: passcode)
            }
        } catch let error as APIError where unique && error.code == .param {
            // Several match: the candidates, listed (or the search's own refusal of the query).
            query.id = try ItemCommand.Get.onlyMatch(of: query, in: keychain)
            secret = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.secret(query, passcode: passcode) }
        }
        if clip {
            let seconds = try Clipboard.copy(secret)
            return StandardStream.error.write("Copied the secret to the clipboard; it is cleared in \(seconds) s.\n")
        }
        SecretOutput.write(secret)
    }
}
