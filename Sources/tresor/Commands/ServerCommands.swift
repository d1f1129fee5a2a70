import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// `tresor server migrate`: a Tresor server's tools (docs/WEB.md, "Running a Tresor server").
struct ServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Tools for a Tresor server (tresord --web PORT --database postgres://…).",
        subcommands: [Migrate.self])

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "migrate",
            abstract: "Move a home's web accounts and their notes onto a server's PostgreSQL database.",
            discussion: """
                Moves every web account of the home — login name and password hash as they are, \
                so its people keep their passwords — with its folders, notes (locked ones exactly \
                as they are locked: nothing is decrypted), Recently Deleted, shares, attachments \
                and passphrase records, into the server's database, sealed under the server key. \
                The local account (On My Computer) is not moved: a server has none. Run it again \
                after an interruption: it finishes the job and writes nothing twice. The home's \
                daemon may keep running. The passcode is asked for on the terminal (or read from \
                standard input with --passcode-stdin); the database's password comes from \
                PGPASSWORD, never from the URL on the command line. The work is done by \
                tresor-server-migrate, installed beside tresor (docs/WEB.md).
                """)

        @OptionGroup var options: GlobalOptions
        @Option(help: "The home whose web accounts move (default: --home, else the default home).", completion: .directory) var from: String?
        @Option(help: "The server's database: postgres://USER@HOST:PORT/DATABASE (its password in PGPASSWORD).") var database: String
        @Option(help: "The server key file the server's instances use (32 bytes, mode 0600).", completion: .file()) var serverKeyFile: String
        @Flag(help: "Read the home's passcode from the first line of standard input.") var passcodeStdin = false

        func validate() throws {
            if options.json { throw ValidationError("tresor server migrate reports in text only (ids and counts); --json is not supported") }
            // As `DatabaseURL.hasPassword` (TresorWebStorePostgres, which `tresor` does not link);
            // tresor-server-migrate checks again.
            if URLComponents(string: database)?.password != nil {
                throw ValidationError(
                    "the database URL carries a password, which a command line shows to every user (ps): leave it out and set PGPASSWORD")
            }
        }

        func run() throws {
            let paths = TresorPaths(home: from ?? options.home)
            let home = paths.home.path
            let keyFile = URL(fileURLWithPath: serverKeyFile).standardizedFileURL.path
            // What fails at once is checked before the passcode is asked for (the rest,
            // tresor-server-migrate checks).
            guard access(paths.keybag.path, F_OK) == 0 else { throw ValidationError("\(home) is not a Tresor home (it has no keybag)") }
            guard access(keyFile, R_OK) == 0 else { throw ValidationError("the server key file \(keyFile) cannot be read") }
            guard let migrator = CompanionExecutable.path(CompanionExecutable.serverMigrator) else {
                throw ValidationError("\(CompanionExecutable.serverMigrator) is not installed beside tresor")
            }
            var input = SecretInput(fromStandardInput: passcodeStdin)
            // A home without a passcode takes an empty line (tresor-server-migrate then reads none).
            let passcode = try input.next("Passcode of the home being migrated:")
            try Self.exec(migrator, arguments: ["--from", home, "--database", database, "--server-key-file", keyFile], input: passcode + "\n")
        }

        /// Becomes `executable` (same process: its progress and report reach this terminal, and a
        /// signal to this process reaches it), its standard input a pipe already holding `input`.
        /// - Throws: `ValidationError` when it cannot be executed.
        static func exec(_ executable: String, arguments: [String], input: String) throws -> Never {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw ValidationError("cannot make a pipe: \(String(cString: strerror(errno)))") }
            let bytes = Array(input.utf8)
            // A passcode is far smaller than a pipe's buffer: the write does not block.
            guard bytes.count < 4096, write(fds[1], bytes, bytes.count) == bytes.count else {
                throw ValidationError("the passcode is too long")
            }
            close(fds[1])
            guard dup2(fds[0], 0) == 0 else { throw ValidationError("cannot hand the passcode over: \(String(cString: strerror(errno)))") }
            close(fds[0])
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            execv(executable, argv)
            throw ValidationError("cannot run \(executable): \(String(cString: strerror(errno)))")
        }
    }
}
