import ArgumentParser
import FoundationEssentials
import TresorKit

struct ItemCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "item",
        abstract: "Add, read, find, change and delete keychain items.",
        discussion: """
            Items are generic passwords (genp), internet passwords (inet), certificates (cert) \
            and keys (keys), with Apple's attributes. The tresor tool sees every application's \
            items, but reveals a secret only with you present — the passcode, or a terminal session \
            (`tresor unlock --for 10m`) — unless the item is readable by scripts. Changing or \
            deleting another application's items needs the same. A label, description or comment \
            given as - is typed, or read from standard input, so that `ps` and the shell's \
            history never see it.
            """,
        subcommands: [Add.self, Generate.self, Get.self, Find.self, Update.self, Delete.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add an item; its secret is typed twice (echo off) or read from standard input.",
            discussion: """
                On a terminal the secret is asked for twice, with echo off. Scripts give it on \
                standard input with --secret-stdin. Options given as - are read first, one line \
                each in the order --label, --description, --comment; the rest of standard input \
                is the secret (it may span lines):
                  printf 'GitHub\\n%s' "$TOKEN" | tresor item add --service github.com --account ada --label - --secret-stdin
                A certificate is its DER: tresor item add --class cert --secret-stdin < cert.der
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(
            help:
                "Read the secret from standard input, after any lines for options given as -: a password less one final line ending, certificate (DER or PEM) or key data byte for byte."
        )
        var secretStdin = false
        @Flag(help: "Reading the secret will need you every time: the passcode, or your answer in `tresor approve` (access control userPresence).")
        var userPresence = false
        @Flag(help: "tresor may print the secret without you present (no passcode, no terminal session): for scripts.")
        var readableByScripts = false
        @Flag(
            help:
                "Where adding needs the passcode (another application's group), read it from standard input: with --secret-stdin its line comes first, before the secret."
        )
        var passcodeStdin = false
        @Option(
            name: .customLong("passcode-fd"),
            help: "Where adding to another application's group needs the passcode, read it from this file descriptor instead.")
        var passcodeDescriptor: Int32?

        func validate() throws {
            if passcodeStdin && passcodeDescriptor != nil { throw ValidationError("--passcode-stdin and --passcode-fd exclude each other") }
            if item.id != nil { throw ValidationError("--id names an item there is (item get, update, delete); a new item's id is the keychain's") }
            try item.checkStorable()
        }

        mutating func run() throws {
            try Output.run(options, keychain: item.keychain) {
                try item.readAskedValues()
                var attributes = try item.attributes
                if userPresence { attributes.accessControl = .userPresence }
                if readableByScripts { attributes.readableByScripts = true }
                let keychain = try options.keychain(named: item.keychain)
                let passcode = try passcodeBeforeSecret(passcodeStdin: passcodeStdin, secretStdin: secretStdin)
                let secret = try newSecret(secretStdin: secretStdin, for: item.itemClass)
                let added = try withPasscodeIfAsked(stdin: passcodeStdin && !secretStdin, descriptor: passcodeDescriptor, given: passcode) {
                    passcode in
                    try keychain.add(item.itemClass, attributes: attributes, secret: secret, passcode: passcode)
                }
                if options.json { return Output.json(ItemJSON(added)) }
                print("Added \(item.itemClass.humanName) \(added.id) to group \(added.attributes?.accessGroup ?? "?").")
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print the secret of the matching item, alone (for scripts), or copy it with --clip.",
            discussion: """
                The attributes given must name exactly one item: when several match, get fails and \
                lists them (never their secrets), so a script cannot get the wrong secret; add an \
                attribute, name the item with --id, or pass --first. Revealing a secret needs you \
                present: the passcode is asked for (or read with --passcode-stdin), unless this \
                terminal has a session (`tresor unlock --for 10m`) or the item is readable by \
                scripts (`item add --readable-by-scripts`, `item update … --set readableByScripts=true`). \
                --clip copies the \
                secret to the clipboard instead (wl-copy or xclip) and clears it after 45 s \
                (TRESOR_CLIP_TIME seconds).
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Read the passcode, if one is needed, from standard input (after any lines for options given as -).")
        var passcodeStdin = false
        @Flag(help: "When several items match, print the first one's secret instead of failing.") var first = false
        @Flag(help: "Copy the secret to the clipboard instead of printing it; cleared after 45 s.") var clip = false

        func validate() throws {
            if clip && options.json { throw ValidationError("--clip and --json exclude each other") }
        }

        mutating func run() throws {
            try Output.run(options, keychain: item.keychain) {
                try item.readAskedValues()
                guard options.json else { return try lookup.run() }
                let keychain = try options.keychain(named: item.keychain)
                var query = try item.query(limit: .one, returnData: true)
                if !first, query.id == nil { query.id = try Self.onlyMatch(of: query, in: keychain) }
                let items = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.items(query, passcode: passcode) }
                guard let found = items.first, found.secret != nil else { throw APIError(.itemNotFound, "no item matches") }
                Output.json(ItemJSON(found))
            }
        }

        /// The command line as ``SecretLookup`` runs it (read by swift-argument-parser).
        var lookup: SecretLookup {
            get throws {
                SecretLookup(
                    home: options.home, verbose: options.verbose, keychain: item.keychain,
                    query: try item.query(limit: .one, returnData: true), first: first, passcodeStdin: passcodeStdin, clip: clip)
            }
        }

        /// The id of the one item `query` names; a clear error listing the candidates (their
        /// identifying attributes, never a secret) when several match.
        /// - Parameters:
        ///   - query: the item's class and attributes.
        ///   - keychain: where to look.
        ///   - several: the option that takes them all (`--first` for a read, `--all` for a deletion).
        /// - Returns: the item's id.
        /// - Throws: `itemNotFound` for none; a `ValidationError` naming the candidates for several.
        static func onlyMatch(of query: ItemQuery, in keychain: Keychain, orPass several: String = "--first") throws -> String {
            // Ids alone first: the attributes are decoded only to list several candidates.
            let ids = try keychain.items(ItemQuery(query.itemClass, attributes: query.attributes, limit: .all, returnAttributes: false))
            guard ids.count > 1 else {
                guard let only = ids.first else { throw APIError(.itemNotFound, "no item matches") }
                return only.id
            }
            let matches = try keychain.items(ItemQuery(query.itemClass, attributes: query.attributes, limit: .all, returnAttributes: true))
            let candidates = matches.prefix(20).map { "  " + ItemText($0).identifying }.joined(separator: "\n")
            throw ValidationError(
                "\(matches.count) items match; name one (another attribute, or --id ID), or pass \(several):\n\(candidates)"
                    + (matches.count > 20 ? "\n  …" : ""))
        }
    }

    struct Find: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "find",
            abstract: "List the matching items' attributes (never their secrets unless --show-secrets).",
            aliases: ["list", "ls"])
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Include the secrets (asks for the passcode where one is needed).") var showSecrets = false
        @Flag(help: "Read the passcode, if one is needed, from standard input.") var passcodeStdin = false

        mutating func run() throws {
            try Output.run(options, keychain: item.keychain) {
                try item.readAskedValues()
                let keychain = try options.keychain(named: item.keychain)
                let query = try item.query(limit: .all, returnData: showSecrets)
                let items = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.items(query, passcode: passcode) }
                if options.json { return Output.json(items.map(ItemJSON.init)) }
                for found in items { print(ItemText(found).rendered) }
            }
        }
    }
}
