import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// `tresor web sessions [end ID | end --all]`, `tresor web invite NAME`, `tresor web
/// reset-password NAME`: the web server's signed-in browsers and the owner's one-time codes.
struct WebCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "The web client's sessions, invites and password resets (tresord --web PORT).",
        subcommands: [Sessions.self, InviteCommand.self, ResetPasswordCommand.self])

    struct Sessions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sessions",
            abstract: "List the signed-in browsers, or sign them out.",
            discussion: """
                Each session shows its id, account, sign-in time, last request and expiry; the \
                id names it for `end` and signs nobody in (tokens never leave the daemon). \
                A keybag lock, `tresor note lock-now` and a passcode change end the local \
                account's sessions by themselves.
                """,
            subcommands: [List.self, End.self],
            defaultSubcommand: List.self)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the web sessions (the default).")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let sessions = try options.connect().webSessions()
                if options.json { return Output.json(sessions) }
                if sessions.isEmpty { print("No web sessions.") }
                for session in sessions {
                    let from = [session.browser, session.address.map { "from \($0)" }].compactMap { $0 }.joined(separator: " ")
                    print(
                        "\(session.id)  \(session.account)\(from.isEmpty ? "" : "  \(from)")  signed in \(NoteText.date(session.created))  "
                            + "last used \(NoteText.date(session.lastUsed))  ends \(NoteText.date(session.expires))")
                }
            }
        }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "end", abstract: "Sign out one web session, or all of them.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The session's id (from `tresor web sessions`).") var id: String?
        @Flag(help: "Sign out every web session of every account.") var all = false

        func validate() throws {
            guard (id == nil) == all else { throw ValidationError("name one session id, or --all") }
        }

        func run() throws {
            try Output.run(options) {
                let ended = try options.connect().endWebSessions(id: id, all: all)
                if options.json { return Output.json(EndWebSessionsResponse(ended: ended)) }
                print("Ended \(ended) web session\(ended == 1 ? "" : "s").")
            }
        }
    }
}
