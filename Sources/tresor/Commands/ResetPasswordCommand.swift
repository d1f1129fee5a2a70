import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// `tresor web reset-password NAME`: a code to set a forgotten web account password (docs/WEB.md,
/// "A forgotten password").
struct ResetPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Let the owner of web account NAME, who forgot its password, choose a new one.",
        discussion: """
            Prints a one-time code: hand it to them yourself, not through anyone who could sign \
            in with it. On the web client's sign-in page they choose "Forgot your password?" and \
            type NAME, the code and a new password; every browser signed in to the account is \
            signed out. Their notes stay as they are; locked notes still open with their notes \
            passphrase only. The code lasts a day, until it is used, until another code is made \
            for NAME, or until tresord stops (on a server, it lasts in the database).
            """)

    @Argument(help: "The account's login name.")
    var name: String

    @OptionGroup var options: GlobalOptions

    func run() throws {
        try Output.run(options) {
            let reset = try options.notes().resetWebPassword(name: name)
            if options.json { return Output.json(reset) }
            print("Password reset code for \(reset.name): \(reset.code)")
            print("Valid until \(reset.expires.formatted(.iso8601)), once.")
        }
    }
}
