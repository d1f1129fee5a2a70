import ArgumentParser
import FoundationEssentials
import TresorKit

extension ItemCommand {
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Change the matching item: attributes with --set, the secret with --secret-stdin.",
            discussion: """
                When several items match, none is changed: they are listed, to name one (another attribute, or --id) or \
                to change them all with --all.
                Example: tresor item update --service api.example.com --set label=- --set accessible=afterFirstUnlock
                A value given as - (--set label=-) is typed, or read from standard input: one \
                line each, after the lines of the matching options given as -, in the order the \
                --set options are given. With --secret-stdin the new secret is typed twice on a \
                terminal, else it is the rest of standard input.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Option(
            name: .customLong("set"),
            help:
                "An attribute to change, name=value (repeatable): label, description, comment, account, service, server, path, port, accessible, accessGroup, accessControl (userPresence), synchronizable, readableByScripts, or custom.KEY; label, description and comment take - to be typed or read from standard input."
        )
        var changes: [String] = []
        @Flag(
            help:
                "Replace the secret: typed twice on a terminal, else the rest of standard input (a password less one final line ending, certificate or key data byte for byte)."
        )
        var secretStdin = false
        @Flag(help: "Change every matching item, however many (every item of the class when no attribute is given).") var all = false
        @Option(name: .customLong("passcode-fd"), help: "Where an item needs the passcode, read it from this file descriptor instead.")
        var passcodeDescriptor: Int32?
        @Flag(
            help:
                "Where the change needs the passcode, read it from standard input, after any lines for values given as -; with --secret-stdin its line comes first, before the secret."
        )
        var passcodeStdin = false

        func validate() throws {
            if passcodeStdin && passcodeDescriptor != nil { throw ValidationError("--passcode-stdin and --passcode-fd exclude each other") }
        }

        mutating func run() throws {
            try Output.run(options, keychain: item.keychain) {
                guard !changes.isEmpty || secretStdin else { throw ValidationError("nothing to change: give --set or --secret-stdin") }
                try item.readAskedValues()
                var query = try item.query(limit: .all, returnData: false)
                // As for a delete: a forgotten --service must not change the whole keychain.
                guard query.id != nil || query.attributes != ItemAttributes() || all else {
                    throw ValidationError("name what to change (attributes or --id), or pass --all")
                }
                let parsed = try Self.parse(changes)
                let keychain = try options.keychain(named: item.keychain)
                // One item unless --all says more, found before any secret is asked.
                if !all && query.id == nil { query.id = try ItemCommand.Get.onlyMatch(of: query, in: keychain, orPass: "--all") }
                let passcode = try passcodeBeforeSecret(passcodeStdin: passcodeStdin, secretStdin: secretStdin)
                let secret = secretStdin ? try newSecret(secretStdin: true, for: item.itemClass) : nil
                let count = try withPasscodeIfAsked(stdin: passcodeStdin && !secretStdin, descriptor: passcodeDescriptor, given: passcode) {
                    passcode in
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
                let name = String(pair[..<equals]), given = String(pair[pair.index(after: equals)...])
                let asked = { (prompt: String) in try AskedText.resolve(given, prompt: prompt) ?? given }
                let value = given
                switch name {
                case "label": attributes.label = try asked("New label:")
                case "description": attributes.description = try asked("New description:")
                case "comment": attributes.comment = try asked("New comment:")
                case "account": attributes.account = value
                case "service": attributes.service = value
                case "server": attributes.server = value
                case "path": attributes.path = value
                case "port":
                    guard let port = Int(value) else { throw ValidationError("port must be a number") }
                    attributes.port = port
                case "accessible":
                    guard let protectionClass = ProtectionClass(argument: value) else { throw ValidationError("unknown protection class \(value)") }
                    attributes.accessible = protectionClass
                case "accessGroup": attributes.accessGroup = value
                case "accessControl":
                    guard let control = AccessControl(rawValue: value) else { throw ValidationError("accessControl is userPresence") }
                    attributes.accessControl = control
                case "synchronizable":
                    guard let synchronizable = Bool(value) else { throw ValidationError("synchronizable is true or false") }
                    attributes.synchronizable = synchronizable
                case "readableByScripts":
                    guard let readable = Bool(value) else { throw ValidationError("readableByScripts is true or false") }
                    attributes.readableByScripts = readable
                case let custom where custom.hasPrefix("custom."):
                    attributes.custom = (attributes.custom ?? [:]).merging([String(custom.dropFirst(7)): value]) { $1 }
                default: throw ValidationError("attribute \(name) cannot be set from the command line")
                }
            }
            return attributes
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete the matching item.",
            discussion: """
                When several items match, none is deleted: they are listed, to name one (another attribute, or --id) or to \
                delete them all with --all. Deleting another application's items needs you present: the passcode, or a \
                terminal session (`tresor unlock --for`).
                """,
            aliases: ["rm"])
        @OptionGroup var options: GlobalOptions
        @OptionGroup var item: ItemOptions
        @Flag(help: "Delete every matching item, however many (every item of the class when no attribute is given).") var all = false
        @Flag(help: "Read the passcode, if one is needed, from standard input (after any lines for options given as -).") var passcodeStdin = false

        mutating func run() throws {
            try Output.run(options, keychain: item.keychain) {
                try item.readAskedValues()
                var query = try item.query(limit: .all, returnData: false)
                let filtered = query.id != nil || query.attributes != ItemAttributes()
                if !filtered && !all {
                    throw ValidationError("name what to delete (attributes or --id), or pass --all")
                }
                let keychain = try options.keychain(named: item.keychain)
                // One item unless --all says more: a filter that matches several deletes none.
                if !all && query.id == nil { query.id = try ItemCommand.Get.onlyMatch(of: query, in: keychain, orPass: "--all") }
                let count = try withPasscodeIfAsked(stdin: passcodeStdin) { passcode in try keychain.delete(query, passcode: passcode) }
                if options.json { return Output.json(["count": count]) }
                print("Deleted \(count) item\(count == 1 ? "" : "s").")
            }
        }
    }
}
