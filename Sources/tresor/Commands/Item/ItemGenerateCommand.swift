import ArgumentParser
import FoundationEssentials
import TresorKit

extension ItemCommand {
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Store a new item with a strong random secret: characters, or a passphrase of words.",
            discussion: """
                By default 24 characters of every class (lower, upper, digits, symbols), at \
                least one of each; --characters picks the classes, --length the length. \
                --words N makes a passphrase of N words from the EFF's long list instead \
                (12.9 bits each). The secret is not printed unless --print; --clip copies it \
                to the clipboard for 45 s. Examples:
                  tresor item generate --service wifi --account home --words 6 --clip
                  tresor item generate --server db.example.com --class inet --account app --length 32 --characters lower,upper,digits
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Option(help: "How many characters (24 unless given).") var length: Int?
        @Option(help: ArgumentHelp("Which characters, comma-separated: lower, upper, digits, symbols (all unless given).", valueName: "classes"))
        var characters: String?
        @Option(help: "A passphrase of this many words instead of characters.") var words: Int?
        @Option(help: "What separates the words of a passphrase.") var separator = "-"
        @Flag(help: "Print the secret after storing it.") var print = false
        @Flag(help: "Copy the secret to the clipboard; cleared after 45 s.") var clip = false
        @Flag(help: "Reading the secret will need you every time (access control userPresence).") var userPresence = false
        @Flag(help: "tresor may print the secret without you present (no passcode, no terminal session): for scripts.")
        var readableByScripts = false
        @Flag(
            help:
                "Where storing needs the passcode (another application's group), read it from standard input, after any lines for options given as -."
        )
        var passcodeStdin = false

        func validate() throws {
            try item.checkStorable()
            if words != nil, length != nil || characters != nil {
                throw ValidationError("--words makes a passphrase of words: --length and --characters are for a secret of characters")
            }
        }

        mutating func run() throws {
            let length = self.length ?? 24, characters = self.characters ?? "lower,upper,digits,symbols"
            try Output.run(options, keychain: item.keychain) {
                try item.readAskedValues()
                var attributes = try item.attributes
                if userPresence { attributes.accessControl = .userPresence }
                if readableByScripts { attributes.readableByScripts = true }
                let classes = try characters.split(separator: ",").map { name in
                    guard let kind = SecretGenerator.CharacterClass(rawValue: name.trimmingWhitespace()) else {
                        throw ValidationError("unknown character class \(name): lower, upper, digits or symbols")
                    }
                    return kind
                }
                if clip { _ = try Clipboard.current() }
                let secret =
                    try words.map { try SecretGenerator.passphrase(words: $0, separator: separator) }
                    ?? SecretGenerator.characters(length: length, classes: classes)
                let bits = words.map(SecretGenerator.bits(words:)) ?? SecretGenerator.bits(length: length, classes: classes)
                let keychain = try options.keychain(named: item.keychain)
                let added = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in
                    try keychain.add(item.itemClass, attributes: attributes, secret: Data(secret.utf8), passcode: passcode)
                }
                if clip { try Clipboard.copy(Data(secret.utf8)) }
                if options.json {
                    var shown = added
                    if print { shown.secret = Data(secret.utf8) }
                    return Output.json(ItemJSON(shown))
                }
                let what = words.map { "\($0) words" } ?? "\(length) characters"
                let line =
                    "Added \(item.itemClass.humanName) \(added.id) to group \(added.attributes?.accessGroup ?? "?"): \(what), about \(bits) bits"
                    + (clip ? "; copied to the clipboard for \(Clipboard.clearSeconds) s" : "") + "."
                guard print else { return Swift.print(line) }
                // The secret alone on standard output, for scripts.
                StandardStream.error.write(line + "\n")
                Swift.print(secret)
            }
        }
    }
}
