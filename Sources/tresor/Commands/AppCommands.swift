import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel

struct AppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Register the executables that may use the keychain, and their access groups.",
        discussion: """
            An application is identified by the SHA-256 of its executable: rebuilding or replacing \
            the file means registering it again — `tresor app register` with the same id replaces \
            its executable, keeping its items, and its shared groups unless --group names others. \
            It may use its own application id as an access group and any group that starts with \
            its team id (TEAM.something).
            """,
        subcommands: [Register.self, List.self, Remove.self])

    struct Register: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register",
            abstract:
                "Register an executable, or register an application's rebuilt executable again (needs the keybag unlocked and the passcode again).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Application id, e.g. TEAM1.com.example.backup.") var id: String
        @Option(help: "Team id: letters and digits.") var team: String
        @Option(help: "The executable file.") var exe: String
        @Option(help: "A shared access group TEAM.name (repeatable); registering again without it keeps the groups it had.")
        var group: [String] = []
        @Flag(
            help: ArgumentHelp(
                "Serve the application's items to it on the Secret Service (D-Bus) too.",
                discussion:
                    "D-Bus carries no credentials per message: another program of yours can borrow a connection the application opened, which the socket API refuses. Without this flag the application reaches its items only through the socket (TresorKit, TresorSecurity). A generic client (an interpreter, secret-tool, git's credential helpers) is refused: any process of yours can run it with arguments of its choosing."
            ))
        var secretService = false
        @Flag(
            help: ArgumentHelp(
                "A build under development: identify it by its path, so rebuilding it keeps its items.",
                discussion:
                    "Weaker than the default (identity by content): any program of yours that can write the file — a build folder is yours — gets the application's items. For the socket API only (TresorKit, TresorSecurity), never the Secret Service. Register the release build without it."
            ))
        var development = false
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

        func validate() throws {
            if development && secretService {
                throw ValidationError("--development and --secret-service exclude each other: a path is nothing D-Bus can vouch for")
            }
        }

        func run() throws {
            try Output.run(options) {
                let path = try existingExecutable(exe)
                let client = try options.connect()
                // Registered again (a rebuild): the groups stay unless others are named.
                let before = (try? client.applications())?.first { $0.applicationID == id }
                let groups = group.isEmpty ? before?.accessGroups ?? [] : group
                let passcode = try client.passcodeAgainIfSet(stdin: passcodeStdin, prompt: "Passcode (to register \(id)):")
                let application = try client.registerApplication(
                    id: id, team: team, executablePath: path, accessGroups: groups, passcode: passcode, usesSecretService: secretService,
                    isDevelopmentBuild: development)
                for warning in Self.warnings(application, before: before) { StandardStream.error.write("warning: \(warning)\n") }
                if options.json { return Output.json(application) }
                print(
                    "Registered \(application.applicationID) (team \(application.teamID)); groups: \(application.allowedGroups.joined(separator: ", "))."
                )
                if application.usesSecretService { print("Its items are served to it on the Secret Service too.") }
                if application.isDevelopmentBuild {
                    StandardStream.error.write(
                        """
                        warning: \(application.applicationID) is a development build, identified by its path \(application.executablePath): \
                        any program of yours that can write that file gets its items. Register the release build without --development.

                        """)
                }
            }
        }

        /// What the user should know of a registration: what it took away, and an executable
        /// every script shares.
        static func warnings(_ application: Application, before: Application?) -> [String] {
            var warnings: [String] = []
            let dropped = (before?.accessGroups ?? []).filter { !application.accessGroups.contains($0) }
            if !dropped.isEmpty {
                warnings.append("\(application.applicationID) no longer reads the items of \(dropped.joined(separator: ", ")) (not named by --group)")
            }
            if before?.usesSecretService == true && !application.usesSecretService {
                warnings.append(
                    "\(application.applicationID) is no longer served on the Secret Service (register it with --secret-service to keep it)")
            }
            // The path as registered: symbolic links resolved (`/usr/bin/python3` is `python3.11`).
            if GenericClients().contains(path: application.executablePath, sha256: Data()) {
                warnings.append(
                    "\(application.executablePath) runs whatever it is given (an interpreter, a shell, a client that hands out secrets): "
                        + "every program of yours that runs it — any script — reads \(application.applicationID)'s items. "
                        + "Register the program itself, or `tresor app remove \(application.applicationID)`")
            }
            return warnings
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the registered applications.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let applications = try options.connect().applications()
                if options.json { return Output.json(applications) }
                if applications.isEmpty { print("No applications registered.") }
                for application in applications {
                    let hash = application.executableSHA256.prefix(8).hexString
                    let bus = application.usesSecretService ? "  also on the Secret Service" : ""
                    let identity = application.isDevelopmentBuild ? "development build, by path" : "sha256 \(hash)…"
                    print(
                        "\(application.applicationID)  team \(application.teamID)  groups \(application.allowedGroups.joined(separator: ","))  \(application.executablePath) (\(identity))\(bus)"
                    )
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove an application; its items stay (needs the keybag unlocked and the passcode again).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The application id.", completion: Completion.applications) var id: String
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                let passcode = try client.passcodeAgainIfSet(stdin: passcodeStdin, prompt: "Passcode (to remove \(id)):")
                try client.removeApplication(id: id, passcode: passcode)
                if options.json { return Output.json(["removed": id]) }
                print("Removed \(id).")
            }
        }
    }
}
