import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// `tresor secret-service trust [add | remove]`: the generic Secret Service clients the user
/// trusts — interpreters, secret-tool, git's credential helpers, whose reads are otherwise put to
/// the user one by one (docs/SECURITY.md, "Generic clients").
struct SecretServiceTrustCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "List, grant or take back trust in generic clients (secret-tool, git's helper, interpreters).",
        discussion: """
            Any program of yours can run secret-tool, git's credential helper or python3 with \
            arguments of its choosing, so Tresor asks you before it hands such a client a secret \
            (in the desktop's prompter, or `tresor approve`). "For this session" remembers the \
            program under the same parent processes for as long as you choose; `trust add` trusts \
            it ahead of time under any parent (your own scripts, CI, a client library's tests). \
            Trust lives in the daemon's memory and ends when it stops.
            """,
        subcommands: [List.self, Add.self, Remove.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List what is trusted now (the default).")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) { SecretServiceTrustCommand.show(try options.connect().secretServiceTrust(), options) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Trust generic clients ahead of time, under any parent (asks for the passcode).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The generic clients (secret-tool, python3, git's helper): a path, or a name found on PATH.") var executables: [String]
        @Option(
            name: .customLong("for"), help: "How long: 90s, 30m, 8h, 7d (default: until the daemon stops).",
            transform: { try TimeSpan($0, option: "--for", atMost: SecretServiceTrustGrant.longestSeconds) })
        var duration: TimeSpan?
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

        func validate() throws {
            guard (1...16).contains(executables.count) else { throw ValidationError("name 1 to 16 executables") }
        }

        func run() throws {
            try Output.run(options) {
                let paths = try executables.map { try existingExecutable($0, searchingPath: true) }
                let client = try options.connect()
                let passcode = try client.passcodeAgainIfSet(
                    stdin: passcodeStdin, prompt: "Passcode (to trust \(paths.joined(separator: ", "))):")
                let list = try client.trustSecretServiceClients(paths, seconds: duration?.seconds, passcode: passcode)
                if options.json { return Output.json(TrustOutput(list)) }
                print("Trusted.")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Take back the trust in an executable, or in all.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The executable, or its entry as `trust` lists it (exe:PATH, exe-sha256:HEX).") var executable: String?
        @Flag(help: "Take back every trust.") var all = false

        func validate() throws {
            guard (executable == nil) == all, executable?.isEmpty != true else { throw ValidationError("name an executable, or all (--all)") }
        }

        func run() throws {
            try Output.run(options) {
                // A listed entry goes as it is; a path is made absolute.
                let listed = executable.map { $0.hasPrefix("exe:") || $0.hasPrefix("exe-sha256:") } ?? false
                let path = listed ? executable : executable.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                let list = try options.connect().removeSecretServiceTrust(executablePath: path)
                if options.json { return Output.json(TrustOutput(list)) }
                print("Taken back.")
            }
        }
    }

    static func show(_ list: SecretServiceTrustList, _ options: GlobalOptions) {
        if options.json { return Output.json(TrustOutput(list)) }
        if list.trusted.isEmpty { print("No generic client is trusted.") }
        for entry in list.trusted {
            let until = entry.until.map { "until \(NoteText.date(Date(timeIntervalSince1970: $0)))" } ?? "until the daemon stops"
            switch entry.origin {
            case .granted:
                // A group known by its hash alone says which file it was.
                let path = entry.path.map { entry.executable.hasPrefix("exe-sha256:") ? "  (\($0))" : "" } ?? ""
                print("\(entry.executable)\(path)  granted ahead of time, under any parent  \(until)")
            case .approved:
                print("\(entry.executable)  approved for this session  \(until)")
                print("  under \(entry.parentChain.joined(separator: " < "))")
            }
        }
    }
}

/// `--json`'s shape of the list: dates in ISO 8601, like every other date the CLI prints.
struct TrustOutput: Encodable {
    struct Entry: Encodable {
        var executable: String
        var origin: String
        var parentChain: [String]
        var since: Date
        var until: Date?
        var path: String?
    }

    var trusted: [Entry]

    init(_ list: SecretServiceTrustList) {
        trusted = list.trusted.map {
            Entry(
                executable: $0.executable, origin: $0.origin.rawValue, parentChain: $0.parentChain,
                since: Date(timeIntervalSince1970: $0.since), until: $0.until.map(Date.init(timeIntervalSince1970:)), path: $0.path)
        }
    }
}
