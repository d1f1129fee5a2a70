import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

extension ConflictPolicy: ExpressibleByArgument {}

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back the whole home up into one file, check a backup, restore one.",
        discussion: """
            A backup is an age file protected by a backup passphrase (`age -d` opens it): every \
            keychain item of every keychain, the application registry, the notes of every account \
            with their attachments. whenPasscodeSetThisDeviceOnly items are never written; the \
            other …ThisDeviceOnly items are sealed with this home's device key and restore only \
            into this home; locked notes stay sealed with their own passphrase. The daemon writes \
            and reads the file itself; Ctrl-C cancels it there too (no file left, nothing restored).
            """,
        subcommands: [Create.self, Verify.self, Restore.self])

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Write a backup of the home to a file (asks for a backup passphrase twice).",
            discussion: """
                It needs you there: the passcode is asked for (a backup exports every secret). \
                The file is written as FILE.partial and renamed once complete, so an existing FILE \
                is replaced whole or not at all. With --passphrase-stdin give the backup passphrase \
                twice, one per line; with --passcode-stdin the passcode first, then the passphrase twice.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: BackupSecretOptions
        @Option(help: "The backup file to write; - for standard output (not a terminal).") var out: String
        @Option(help: "scrypt's work factor, log2(N), 14 to 20 (default 18: 256 MiB, about a second).") var workFactor: Int?

        func validate() throws {
            if out == "-" && options.json { throw ValidationError("--out - writes the backup to standard output: --json cannot go there too") }
        }

        func run() throws {
            try Output.run(options) {
                var input = secrets.input()
                let passcode = secrets.passcodeStdin ? try input.next("Passcode:") : nil
                let passphrase = try input.newPassphrase("Backup passphrase:", guarding: "the backup file")
                let piped = out == "-" ? try BackupToStandardOutput() : nil
                defer { piped?.remove() }
                let path = piped?.path ?? URL(fileURLWithPath: out).path
                let report = try BackupCalls(options: options).run("Backing up") { client in
                    try withPresence(passcode, secrets) { passcode in
                        try client.backupCreate(BackupCreateRequest(path: path, passphrase: passphrase, passcode: passcode, workFactor: workFactor))
                    }
                }
                if let piped {
                    try piped.copy()
                    // Standard output carries the backup: the report goes to standard error.
                    StandardStream.error.write(BackupText.created(report).replacing(path, with: "standard output") + "\n")
                } else if options.json {
                    Output.json(report)
                } else {
                    print(BackupText.created(report))
                }
                try BackupText.exitUnlessWhole(report, "backed up", again: "back up again")
            }
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Read a backup to its end with its passphrase and check it; changes nothing.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Read the backup passphrase from the first line of standard input.") var passphraseStdin = false
        @Argument(help: "The backup file.") var file: String

        func run() throws {
            try Output.run(options) {
                var input = SecretInput(fromStandardInput: passphraseStdin, flag: "--passphrase-stdin")
                let passphrase = try input.next("Backup passphrase:")
                let path = URL(fileURLWithPath: file).path
                let report = try BackupCalls(options: options).run("Verifying") { client in
                    try client.backupVerify(BackupVerifyRequest(path: path, passphrase: passphrase))
                }
                if options.json { return Output.json(report) }
                print(BackupText.verified(report))
            }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Restore a backup into this home (it must exist and be unlocked: `tresor init` first on a new machine).",
            discussion: """
                The whole file is read and checked before the home changes; then everything is \
                committed at once, or nothing is. Items are sealed anew under this home's keys. What \
                the home holds already is not added again; a different version of it is left as it \
                is and reported (--on-conflict replace overwrites it; a note's version here is kept in \
                Recently Deleted). The report says what became of \
                every item, note and attachment (all of them with --json). Needs the passcode; with \
                --passcode-stdin give it first, then the backup passphrase.

                A backup can give rights in this home: a registered application reads its groups' \
                items, a web account signs in to the web client, and the notes of an account reach \
                whoever reads that account (a team's notes account, team:ID, is read by the team's \
                applications). None is restored unless you allow it — all of them \
                (--allow-applications, --allow-web-accounts) or one by one (--allow-application ID, \
                --allow-web-account LOGIN or ID, repeated); a backup made elsewhere puts notes into no \
                account but the local one without it, not even an account this home holds, while this \
                home's own backup restores into this home's accounts unasked. --dry-run and the report \
                list each by executable and groups, or by login name or id: read them before you \
                allow them, above all in a backup someone else made. A generic client — an \
                interpreter (python, perl, sh…), secret-tool, git's credential helpers, a name of \
                config.json's secretServiceGenericClients — never gets another application's groups \
                from a backup; notes go only into accounts the backup holds. A record the format \
                forbids refuses the whole file. On a terminal, with none of these options, the file \
                is checked first and you are asked about each application and account, one by one, \
                before anything changes.
                """)
        @OptionGroup var options: GlobalOptions
        @OptionGroup var secrets: BackupSecretOptions
        @Argument(help: "The backup file.") var file: String
        @Flag(help: "Check the file and report what would be restored; change nothing.") var dryRun = false
        @Option(help: "What to do with an item or note the home holds in another version: skip (default) or replace.")
        var onConflict: ConflictPolicy = .skip
        @Flag(help: "Register every application of the backup (each listed by executable and groups).") var allowApplications = false
        @Option(
            name: .customLong("allow-application"),
            help: ArgumentHelp("Register this application of the backup (its id; repeatable).", valueName: "id"))
        var allowedApplications: [String] = []
        @Flag(help: "Add every web account of the backup (a login with the backup's password); restore into every account it names.")
        var allowWebAccounts = false
        @Option(
            name: .customLong("allow-web-account"),
            help: ArgumentHelp(
                "Add this web account of the backup, or restore into this account (its login name or id, e.g. team:ID; repeatable).",
                valueName: "login"))
        var allowedWebAccounts: [String] = []

        func run() throws {
            try Output.run(options) {
                var input = secrets.input()
                var passcode = secrets.passcodeStdin ? try input.next("Passcode:") : nil
                let passphrase = try input.next("Backup passphrase:")
                let path = URL(fileURLWithPath: file).path
                let calls = BackupCalls(options: options)
                func restore(_ label: String, dryRun: Bool, everyEntry: Bool, consent: RestoreConsent) throws -> BackupReport {
                    try calls.run(label) { client in
                        try withPresence(passcode, secrets) { given in
                            let report = try client.backupRestore(
                                BackupRestoreRequest(
                                    path: path, passphrase: passphrase, passcode: given, dryRun: dryRun, onConflict: onConflict,
                                    everyEntry: everyEntry, consent: consent))
                            passcode = given  // typed once: the restore after the check takes it too
                            return report
                        }
                    }
                }
                var consent = consentGiven
                if !dryRun && !options.json && consent == .none && Terminal.available {
                    let check = try restore("Checking", dryRun: true, everyEntry: false, consent: .none)
                    consent = Self.askConsent(for: check.entries.filter { $0.reason == .needsConsent })
                }
                let report = try restore(dryRun ? "Checking" : "Restoring", dryRun: dryRun, everyEntry: options.json, consent: consent)
                if options.json { Output.json(report) } else { print(BackupText.restored(report)) }
                if !dryRun { try BackupText.exitUnlessWhole(report, "restored", again: "restore again (what was restored stays)") }
            }
        }

        private var consentGiven: RestoreConsent {
            RestoreConsent(
                allApplications: allowApplications, applications: allowedApplications,
                allWebAccounts: allowWebAccounts, webAccounts: allowedWebAccounts)
        }

        /// Asks on the terminal about each application a restore would register and each account
        /// it would add or restore into.
        private static func askConsent(for entries: [BackupReportEntry]) -> RestoreConsent {
            var consent = RestoreConsent()
            for entry in entries {
                switch entry.kind {
                case .application:
                    let question = "The backup registers application \(TerminalText.printable(entry.description)): it would read those groups' items."
                    if Terminal.confirm(question + " Register it? [y/N] ") {
                        consent.applications.append(entry.id)
                    }
                case .account:
                    let question = TerminalText.printable(
                        "The backup's \(entry.description): \(entry.detail ?? "allowing it restores into that account").")
                    if Terminal.confirm(question + " Allow it? [y/N] ") {
                        consent.webAccounts.append(entry.id)
                    }
                default:
                    break
                }
            }
            return consent
        }
    }
}

/// Where `tresor backup`'s secrets come from: the terminal (echo off), or standard input one per
/// line — `--passphrase-stdin` (the backup passphrase), or `--passcode-stdin` (the passcode
/// first, then the backup passphrase).
struct BackupSecretOptions: ParsableArguments {
    @Flag(help: "Read the backup passphrase from standard input (create: twice, one per line).")
    var passphraseStdin = false

    @Flag(help: "Read the passcode from the first line of standard input, then the backup passphrase.")
    var passcodeStdin = false

    func input() -> SecretInput {
        SecretInput(fromStandardInput: passphraseStdin || passcodeStdin, flag: passcodeStdin ? "--passcode-stdin" : "--passphrase-stdin")
    }
}

/// Sends a backup request with the passcode given; without one, first as it is (a CLI session may
/// have proved the user present), then — when the daemon asks — with the passcode typed on the
/// terminal.
private func withPresence<T>(_ passcode: String?, _ secrets: BackupSecretOptions, _ body: (String?) throws -> T) throws -> T {
    if let passcode { return try body(passcode) }
    do {
        return try body(nil)
    } catch let error as APIError where error.code == .passcodeRequired {
        guard Terminal.available else {
            throw ValidationError("this needs the passcode: give it on the first line of standard input with --passcode-stdin")
        }
        var terminal = SecretInput(fromStandardInput: false)
        return try body(try terminal.next("Passcode:"))
    }
}

/// A backup call, on a connection that waits as long as the home takes, with a progress bar fed
/// from a second connection on a terminal.
private struct BackupCalls {
    let options: GlobalOptions

    /// A day: a backup of a large home takes minutes; the progress connection shows it alive.
    static let timeout = Duration.seconds(24 * 3600)

    func run(_ label: String, _ call: @escaping (TresorClient) throws -> BackupReport) throws -> BackupReport {
        try GlobalOptions.requireHome(options.home)
        let client = try TresorClient.connect(paths: options.paths, timeout: Self.timeout)
        guard ProgressBar.enabled && !options.json else { return try call(client) }
        let observer = try? options.connect()
        var bar = ProgressBar(label: label)
        defer { bar.finish() }
        let work = UncheckedSendable(client)
        return try whilePolling({ try call(work.value) }) {
            guard let progress = try? observer?.backupProgress(), progress.running else { return }
            bar.updateBytes(done: progress.bytesDone, total: progress.bytesTotal, items: progress.itemsDone)
        }
    }
}

/// The words of `tresor backup`'s reports.
enum BackupText {
    static func created(_ report: BackupReport) -> String {
        var lines = ["Backed up \(counts(report, .backedUp)) to \(report.path) (\(ByteSize(report.bytes)), work factor \(report.workFactor ?? 0))."]
        lines += leftOut(report)
        return lines.joined(separator: "\n")
    }

    static func verified(_ report: BackupReport) -> String {
        var lines = [
            "\(report.path) is a whole, unchanged backup\(report.created.map { " made \(NoteText.date($0))" } ?? ""): \(counts(report, .backedUp))."
        ]
        lines += leftOut(report)
        return lines.joined(separator: "\n")
    }

    static func restored(_ report: BackupReport) -> String {
        let verb = report.operation == "dry-run" ? "Would restore" : "Restored"
        var lines = ["\(verb) \(counts(report, .restored, .replaced)) from \(report.path)."]
        for (outcome, words) in [
            (BackupOutcome.replaced, "Replaced"), (.alreadyPresent, "Already present"), (.conflict, "In conflict, kept as they are"),
            (.skipped, "Skipped"),
        ] {
            let text = counts(report, outcome)
            if text != "nothing" { lines.append("\(words): \(text).") }
        }
        if report.entries.contains(where: { $0.reason == .deviceBoundToAnotherHome }) {
            lines.append("The backup was made in another home: its …ThisDeviceOnly items stay out.")
        }
        // Applications and accounts added are listed too: each gives someone rights here; and the
        // accounts a backup made elsewhere restores into.
        let listed = report.entries.filter {
            $0.outcome != .restored && $0.outcome != .alreadyPresent || $0.outcome == .restored && [.application, .account].contains($0.kind)
                || $0.outcome == .alreadyPresent && $0.kind == .account && report.sameHome != true
        }
        for entry in listed { lines.append("  \(line(entry))") }
        if report.count(.note, .replaced) > 0 {
            let kept = report.operation == "dry-run" ? "would be kept" : "are kept"
            lines.append("The notes' versions here that the backup's replace \(kept) in Recently Deleted (tresor note trash list).")
        }
        if report.count(.item, .conflict) + report.count(.note, .conflict) > 0 {
            lines.append(
                "Restore again with --on-conflict replace to overwrite what is in conflict (a note's version here is kept in Recently Deleted).")
        }
        let unallowed = Set(report.entries.filter { $0.reason == .needsConsent }.map(\.kind))
        if unallowed.contains(.application) {
            lines.append(
                "Applications read their groups' items: check each above, then restore with --allow-applications "
                    + "or --allow-application ID to register them.")
        }
        if unallowed.contains(.account) {
            lines.append(
                "Web accounts sign in to the web client with the backup's password, and an account takes the notes of a backup "
                    + "made elsewhere (an application team's, team:ID, or one this home holds) only when you allow it: check each "
                    + "above, then restore with --allow-web-accounts, or --allow-web-account LOGIN or ID for each.")
        }
        return lines.joined(separator: "\n")
    }

    /// `12 items, 3 notes` of the kinds that ended as one of `outcomes`.
    static func counts(_ report: BackupReport, _ outcomes: BackupOutcome...) -> String {
        let parts = BackupEntryKind.allCases.compactMap { kind -> String? in
            let count = outcomes.reduce(0) { $0 + report.count(kind, $1) }
            guard count > 0 else { return nil }
            return "\(count) \(kind.rawValue)\(count == 1 ? "" : "s")"
        }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }

    private static func leftOut(_ report: BackupReport) -> [String] {
        let entries = report.entries.filter { $0.outcome == .leftOut }
        guard !entries.isEmpty else { return [] }
        return ["Left out:"] + entries.map { "  \(line($0))" }
    }

    /// `skipped: item genp service=… (keychain login): why`; what was left out of a backup
    /// without the outcome (the list says it).
    static func line(_ entry: BackupReportEntry) -> String {
        let place = entry.keychain.map { " (keychain \($0))" } ?? ""
        let why = entry.reason.map { ": \(reason($0))" } ?? (entry.outcome == .conflict ? ": the home holds another version" : "")
        let outcome = entry.outcome == .leftOut ? "" : "\(outcome(entry.outcome)): "
        // What a backup file says, shown as text that draws nothing: the file may be someone else's.
        return TerminalText.printable("\(outcome)\(entry.kind.rawValue) \(entry.description)\(place)\(why)\(entry.detail.map { " (\($0))" } ?? "")")
    }

    static func outcome(_ outcome: BackupOutcome) -> String {
        switch outcome {
        case .alreadyPresent: "already present"
        case .backedUp: "backed up"
        case .leftOut: "left out"
        default: outcome.rawValue
        }
    }

    /// Exit status 2, and a line on standard error saying what to do, when something was left
    /// out for now: a script learns that the backup or restore is not whole.
    static func exitUnlessWhole(_ report: BackupReport, _ done: String, again: String) throws {
        let left = report.leftOutForNow
        guard !left.isEmpty else { return }
        let commands = Set(
            left.map { entry -> String in
                let name = entry.keychain.map { TerminalText.printable($0) }
                if entry.reason == .keychainMissing, let name { return "`tresor keychain create \(name)`" }
                return name.map { $0 == "login" ? "`tresor unlock`" : "`tresor unlock --keychain \($0)`" } ?? "`tresor unlock`"
            })
        let fix = commands.sorted().joined(separator: ", ")
        StandardStream.error.write(
            "Not everything was \(done): \(left.count) left out for now (listed above). Put it right — \(fix) — and \(again).\n")
        throw ExitCode(2)
    }

    static func reason(_ reason: BackupReason) -> String {
        switch reason {
        case .passcodeSetOnly: "whenPasscodeSetThisDeviceOnly items are never backed up"
        case .deviceBoundToAnotherHome: "a …ThisDeviceOnly item of another home"
        case .excludedFromBackup: "excluded from backups"
        case .unreadable: "could not be read"
        case .keychainMissing: "this home has no keychain of that name (create it, then restore again)"
        case .keychainLocked: "its keychain is locked (unlock it, then restore again)"
        case .dependsOnSkipped: "what it belongs to was not restored"
        case .invalid: "the home does not accept it as it is"
        case .needsConsent: "not allowed (see below)"
        case .genericClientGroups:
            "a generic client (an interpreter, secret-tool, git's credential helpers, or a name of the daemon's "
                + "secretServiceGenericClients) is never given another application's groups from a backup"
        case .duplicate: "the backup holds it twice; the first one counts"
        case .idInUse: "its id is taken in this home by something else"
        case .accountNotInBackup: "its account is not in the backup: nothing goes into an account from outside it"
        }
    }
}
