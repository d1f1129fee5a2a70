import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// `tresor web invite NAME`: an invite to register a web account (docs/WEB.md, "Registration").
struct InviteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Invite someone to register a web account under NAME.",
        discussion: """
            Prints a one-time code. The person types NAME, the code and a password on the web \
            client's "Create an account" form. By default ("webRegistration": "invite" in \
            config.json) nobody registers without one, so the web server never tells anyone \
            which names exist. The code lasts 7 days, until it is used, or until tresord stops.
            """)

    @Argument(help: "The login name to register: 1–32 of a-z 0-9 . _ -")
    var name: String

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try Output.run(options) {
            let invite = try options.notes().inviteWebAccount(name: name)
            if options.json { return Output.json(invite) }
            print("Invite for \(invite.name): \(invite.code)")
            print("Valid until \(invite.expires.formatted(.iso8601)), once.")
            if invite.registration != "invite" { print("Note: registration is open (webRegistration), so no invite is needed.") }
        }
    }
}
