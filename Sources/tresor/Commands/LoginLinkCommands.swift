import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

extension PasscodeCommand {
    struct LinkLogin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "link-login",
            abstract: "Unlock the keybag when you log in: link it to your login password.",
            discussion: """
                Wraps the class keys a second time under your login password, so the PAM module \
                (pam_tresor, installed with scripts/install-pam) unlocks the keybag when you log in \
                or unlock the screen. The passcode stays as it is and keeps working; the login \
                password is never stored. A password change through passwd follows along; when \
                root sets your password, `tresor status` says the link is stale: run this again. \
                With --passcode-stdin give one per line: the passcode, the login password, and \
                optionally the login password again.
                """)

        @OptionGroup var options: GlobalOptions
        @Flag(help: "Read the passcode and the login password from standard input, one per line.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let passcode = try input.next("Passcode:")
                let password = try input.new("Login password:")
                let status = try options.connect().linkLogin(passcode: passcode, loginPassword: password)
                if options.json { return Output.json(status) }
                if let other = status.loginLink?.loginOpensOtherHome {
                    print("Keybag linked to the login password — but logging in opens only \(other), not this home: the login does not see")
                    print("TRESOR_HOME or XDG_DATA_HOME. Unlock this home with `tresor unlock`, or keep it at \(other).")
                } else if LoginModule.isInstalled {
                    print("Keybag linked to the login password: logging in or unlocking the screen unlocks it.")
                } else {
                    print("Keybag linked to the login password — but no PAM service names the module pam_tresor, so logging in")
                    print("unlocks nothing yet: install it with `sudo scripts/install-pam --enable`.")
                }
            }
        }
    }

    struct UnlinkLogin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlink-login",
            abstract: "Stop unlocking the keybag at login.",
            discussion: """
                Removes the keys wrapped under the login password, with the passcode (so no other \
                program of yours can take the link away); the passcode itself is untouched. A keybag \
                not linked is left as it is, and the passcode not asked.
                """)

        @OptionGroup var options: GlobalOptions
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                let current = try client.status()
                guard current.loginLink != nil else {
                    if options.json { return Output.json(current) }
                    return print("The keybag was not linked to the login password.")
                }
                var input = SecretInput(fromStandardInput: passcodeStdin)
                let status = try client.unlinkLogin(passcode: try input.next("Passcode:"))
                if options.json { return Output.json(status) }
                print("Keybag no longer linked to the login password.")
            }
        }
    }
}
