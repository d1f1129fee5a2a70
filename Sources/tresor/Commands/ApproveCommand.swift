import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

/// `tresor approve`: the user's side of user presence for applications.
struct ApproveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Answer applications that need you to be present for a secret.",
        discussion: """
            Leave `tresor approve` running in the foreground of a terminal (in the background, \
            or without a terminal, it is refused: any program could run it there). When an \
            application asks for a secret that needs your presence (an item added with user \
            presence, for example) — or a generic Secret Service client you do not trust now \
            (secret-tool, git's helper, an interpreter) asks to read, replace or delete one of its \
            items — it shows which application asks to do what with which item — the \
            process, its command line and the processes that started it — and asks for your passcode: typing it allows \
            that one request, an empty answer refuses it. The application never sees the \
            passcode — it only learns yes or no. Without a `tresor approve` running, such \
            requests fail at once, as before. With --passcode-stdin, each answer is a line of \
            standard input (an empty line refuses).
            """)
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Read each answer (the passcode, or an empty line to refuse) from standard input.") var passcodeStdin = false
    @Flag(help: "Answer one request, then exit.") var once = false
    @Option(
        name: .customLong("for-session"),
        help: """
            Allowing a generic Secret Service client (secret-tool, git's helper, an interpreter): remember it under the \
            same parent processes this long (30m, 8h) instead of for one read.
            """, transform: { try TimeSpan($0, option: "--for-session", atMost: SecretServiceTrustGrant.longestSeconds) })
    var forSession: TimeSpan?

    func run() throws {
        try Output.run(json: false) {
            let client = try options.connect()
            var input = SecretInput(fromStandardInput: passcodeStdin)
            StandardStream.error.write("Waiting for applications that need you (Ctrl-C to stop)…\n")
            while true {
                StandardStream.showPrinted()
                guard let request = try client.nextApproval(waitSeconds: 25) else { continue }
                let shown = { (text: String) in TerminalText.printable(text, limit: 600) }
                print("\(shown(request.application)) (\(shown(request.executable))) \(request.asks): \(shown(request.item))")
                for line in request.requesterLines { print("  " + line) }
                let answer = try input.next("Passcode to allow (empty to refuse): ")
                do {
                    try client.answerApproval(
                        request.id, passcode: answer.isEmpty ? nil : answer, rememberSeconds: forSession?.seconds)
                    print(answer.isEmpty ? "Refused." : "Allowed.")
                } catch let error as APIError where error.code == .authFailed || error.code == .throttled {
                    // Counted as a wrong passcode at unlock is; the application is refused.
                    try? client.answerApproval(request.id, passcode: nil)
                    print("Wrong passcode: refused.")
                } catch let error as APIError where error.code == .notFound {
                    print("The application stopped waiting.")
                }
                if once { return }
            }
        }
    }
}
