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
            items, but reveals another application's secret only with the passcode.
            """,
        subcommands: [Add.self, Get.self, Find.self, Update.self, Delete.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add an item; the secret comes from standard input.",
            discussion: """
                Example: printf %s "$TOKEN" | tresor item add --service api.example.com --account ci --secret-stdin
                For a certificate, pipe its DER: tresor item add --class cert --secret-stdin < cert.der
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Read the secret (or the certificate or key data) from standard input.") var secretStdin = false
        @Flag(help: "Reading the secret will need you every time: the passcode, or your answer in `tresor approve` (access control userPresence).")
        var userPresence = false

        func run() throws {
            try Output.run(options) {
                guard secretStdin else { throw ValidationError("give the secret on standard input with --secret-stdin") }
                var attributes = try item.attributes
                if userPresence { attributes.accessControl = .userPresence }
                let added = try options.keychain(named: item.keychain).add(
                    item.itemClass, attributes: attributes, secret: try readSecretFromStandardInput())
                if options.json { return Output.json(added) }
                print("Added \(item.itemClass.humanName) \(added.id) to group \(added.attributes?.accessGroup ?? "?").")
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Print the secret of the matching item, alone (for scripts).",
            discussion: """
                The attributes given must name exactly one item: when several match, get fails and \
                lists them (never their secrets), so a script cannot get the wrong secret; add an \
                attribute, name the item with --id, or pass --first. If the item needs the \
                passcode, it is asked for (or read with --passcode-stdin).
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Read the passcode, if one is needed, from standard input.") var passcodeStdin = false
        @Flag(help: "When several items match, print the first one's secret instead of failing.") var first = false

        func run() throws {
            try Output.run(options) {
                let keychain = try options.keychain(named: item.keychain)
                var query = try item.query(limit: .one, returnData: true)
                if !first, query.id == nil { query.id = try Self.onlyMatch(of: query, in: keychain) }
                if options.json {
                    let items = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.items(query, passcode: passcode) }
                    guard let found = items.first, found.secret != nil else { throw APIError(.itemNotFound, "no item matches") }
                    return Output.json(found)
                }
                // The secret alone takes the lookup route (no JSON either way), as applications' do.
                let secret = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.secret(query, passcode: passcode) }
                StandardStream.output.write(secret)
                if StandardStream.output.isTerminal { print() }
            }
        }

        /// The id of the one item `query` names; a clear error listing the candidates (their
        /// identifying attributes, never a secret) when several match.
        static func onlyMatch(of query: ItemQuery, in keychain: Keychain) throws -> String {
            let matches = try keychain.items(ItemQuery(query.itemClass, attributes: query.attributes, limit: .all, returnAttributes: true))
            guard matches.count > 1 else {
                guard let only = matches.first else { throw APIError(.itemNotFound, "no item matches") }
                return only.id
            }
            let candidates = matches.prefix(20).map { "  " + ItemText($0).identifying }.joined(separator: "\n")
            throw ValidationError(
                "\(matches.count) items match; name one (another attribute, or --id ID), or pass --first:\n\(candidates)"
                    + (matches.count > 20 ? "\n  …" : ""))
        }
    }

    struct Find: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "find",
            abstract: "List the matching items' attributes (never their secrets unless --show-secrets).")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Include the secrets (asks for the passcode where one is needed).") var showSecrets = false
        @Flag(help: "Read the passcode, if one is needed, from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                let keychain = try options.keychain(named: item.keychain)
                let query = try item.query(limit: .all, returnData: showSecrets)
                let items = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.items(query, passcode: passcode) }
                if options.json { return Output.json(items) }
                for found in items { print(ItemText(found).rendered) }
            }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Change the matching items: attributes with --set, the secret with --secret-stdin.",
            discussion: "Example: tresor item update --service api.example.com --set label='CI token' --set accessible=afterFirstUnlock")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Option(name: .customLong("set"), help: "An attribute to change, name=value (repeatable): label, description, comment, account, service, server, path, port, accessible, accessGroup, or custom.KEY.")
        var changes: [String] = []
        @Flag(help: "Replace the secret with standard input.") var secretStdin = false
        @Option(name: .customLong("passcode-fd"), help: "Where an item needs the passcode, read it from this file descriptor (standard input carries the secret).")
        var passcodeDescriptor: Int32?

        func run() throws {
            try Output.run(options) {
                let secret = secretStdin ? try readSecretFromStandardInput() : nil
                guard !changes.isEmpty || secret != nil else { throw ValidationError("nothing to change: give --set or --secret-stdin") }
                let keychain = try options.keychain(named: item.keychain)
                let query = try item.query(limit: .all, returnData: false)
                let parsed = try Self.parse(changes)
                let count = try withPasscodeIfAsked(stdin: false, descriptor: passcodeDescriptor) { passcode in
                    try keychain.update(query, secret: secret, changes: parsed, passcode: passcode)
                }
                if options.json { return Output.json(["count": count]) }
                print("Updated \(count) item\(count == 1 ? "" : "s").")
            }
        }

        static func parse(_ pairs: [String]) throws -> ItemAttributes {
            var attributes = ItemAttributes()
            for pair in pairs {
                guard let equals = pair.firstIndex(of: "=") else { throw ValidationError("--set takes name=value, got \(pair)") }
                let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
                switch name {
                case "label": attributes.label = value
                case "description": attributes.description = value
                case "comment": attributes.comment = value
                case "account": attributes.account = value
                case "service": attributes.service = value
                case "server": attributes.server = value
                case "path": attributes.path = value
                case "port":
                    guard let port = Int(value) else { throw ValidationError("port must be a number") }
                    attributes.port = port
                case "accessible":
                    guard let protectionClass = ProtectionClass(rawValue: value) else { throw ValidationError("unknown protection class \(value)") }
                    attributes.accessible = protectionClass
                case "accessGroup": attributes.accessGroup = value
                case let custom where custom.hasPrefix("custom."):
                    attributes.custom = (attributes.custom ?? [:]).merging([String(custom.dropFirst(7)): value]) { $1 }
                default: throw ValidationError("attribute \(name) cannot be set from the command line")
                }
            }
            return attributes
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete the matching items.")
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Allow deleting every item of the class when no attribute is given.") var all = false

        func run() throws {
            try Output.run(options) {
                let query = try item.query(limit: .all, returnData: false)
                let filtered = query.id != nil || query.attributes != ItemAttributes()
                if !filtered && !all {
                    throw ValidationError("name what to delete (attributes or --id), or pass --all")
                }
                let count = try options.keychain(named: item.keychain).delete(query)
                if options.json { return Output.json(["count": count]) }
                print("Deleted \(count) item\(count == 1 ? "" : "s").")
            }
        }
    }
}

/// An item's attributes as text.
struct ItemText {
    let item: KeychainItem
    init(_ item: KeychainItem) { self.item = item }

    /// One line: the class, the id and the attributes that tell items apart.
    var identifying: String {
        (["\(item.itemClass.humanName) \(item.id)"] + (item.attributes?.identifying ?? [])).joined(separator: "  ")
    }

    var rendered: String {
        var lines = ["\(item.itemClass.humanName) \(item.id)"]
        if let attributes = item.attributes {
            let data = (try? JSONEncoder.sorted.encode(attributes)) ?? Data()
            let values = (try? JSONDecoder().decode([String: AttributeText].self, from: data)) ?? [:]
            for key in values.keys.sorted() { lines.append("  \(key): \(values[key]!.text)") }
        }
        if let secret = item.secret { lines.append("  secret: \(String(data: secret, encoding: .utf8) ?? "<\(secret.count) bytes>")") }
        return lines.joined(separator: "\n")
    }
}

/// An attribute's JSON value as a person reads it: strings, numbers and booleans as they are,
/// maps (`custom`) as sorted key=value lists.
struct AttributeText: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let bool = try? value.decode(Bool.self) {
            text = "\(bool)"
        } else if let integer = try? value.decode(Int64.self) {
            text = "\(integer)"
        } else if let string = try? value.decode(String.self) {
            text = string
        } else {
            let map = try value.decode([String: String].self)
            text = map.keys.sorted().map { "\($0)=\(map[$0]!)" }.joined(separator: ", ")
        }
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
