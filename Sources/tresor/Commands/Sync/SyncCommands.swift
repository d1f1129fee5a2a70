import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

#if canImport(Glibc)
import Glibc
#endif

/// `tresor sync …`: this device in a sync account on a Tresor server (docs/SYNC.md, "Devices").
struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Share this keychain with your other machines through a Tresor server.",
        discussion: """
            A sync account is a web account of a Tresor server (server mode). The first device \
            that joins creates the account's circle and prints a recovery key once; each further \
            device asks to join and is let in on a device of the circle with `tresor sync approve`, \
            after you compared the words both show. The server never holds a key that opens a \
            synced item, and cannot add a device.
            """,
        subcommands: [
            Join.self, Approve.self, Recover.self, Devices.self, Remove.self, Leave.self, Status.self, Now.self, Conflicts.self, Include.self,
            Exclude.self,
        ])

    struct Join: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join",
            abstract: "Join a sync account (the first device creates it).",
            discussion: """
                Signs in to the server's web account with its password (typed with echo off, or \
                one line of standard input with --password-stdin). The account's first device \
                prints the recovery key — write it down: it is shown once and stored nowhere. Any \
                further device prints six words and its request, and waits (up to 10 minutes, \
                unless --no-wait) until a trusted device approves it with `tresor sync approve` \
                showing the same words. Plain http:// is accepted only for a loopback host. Where \
                the server registers accounts by invite, --invite (or --invite-stdin) registers \
                the web account with the owner's invite and this password first.
                """)
        @Argument(help: "The server's address: https://HOST[:PORT] (http:// for a loopback host only).") var server: String
        @Option(help: "The web account's name.") var account: String
        @Flag(help: "Read the account password from standard input.") var passwordStdin = false
        @Option(
            help: ArgumentHelp(
                "Register the web account first with this invite (`tresor web invite NAME` on the server).",
                discussion: "Other local users can read a command line: on a shared machine prefer --invite-stdin."))
        var invite: String?
        @Flag(help: "Read the invite from standard input (the line before the password with --password-stdin).") var inviteStdin = false
        @Option(help: "What the other devices call this one (the host name by default).") var deviceName: String?
        @Flag(help: "Return once the request is sent; `tresor sync status` or a later `tresor sync join` shows the answer.") var noWait = false
        @Option(help: SyncCommand.caFileHelp) var caFile: String?
        @OptionGroup var options: GlobalOptions

        func validate() throws {
            if invite != nil && inviteStdin { throw ValidationError("give --invite CODE or --invite-stdin, not both") }
        }

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                if try client.syncStatus().state == .waiting {
                    return try SyncCommand.wait(client, json: options.json, noWait: noWait)
                }
                var code = invite
                if inviteStdin {
                    var input = SecretInput(fromStandardInput: true, flag: "--invite-stdin")
                    code = try input.next("Invite for \(account):")
                }
                var input = SecretInput(fromStandardInput: passwordStdin, flag: "--password-stdin")
                let password = try input.next("Password of \(account) on \(server):")
                let answer = try client.syncJoin(
                    SyncJoinRequestBody(
                        server: server, account: account, password: password, deviceName: deviceName, invite: code,
                        caCertificates: try SyncCommand.certificateAuthorities(caFile)))
                if options.json && (answer.state != .waiting || noWait) { return Output.json(answer) }
                if let recoveryKey = answer.recoveryKey {
                    print("This device created the sync circle of \(account).")
                    print("Recovery key (shown once, stored nowhere — write it down):")
                    print("  \(recoveryKey)")
                    return
                }
                try SyncCommand.wait(client, sent: answer, json: options.json, noWait: noWait)
            }
        }
    }

    /// Shows a waiting device's request and the words to compare, then waits for its approval
    /// (up to 10 minutes), asking the daemon every 2 s.
    /// - Parameters:
    ///   - client: the daemon.
    ///   - sent: the answer to the join that sent the request; nil when the request was sent
    ///     before (a join run again): then the daemon is asked where it stands.
    ///   - json: print the last answer as JSON, and nothing before it.
    ///   - noWait: show the request and return.
    static func wait(_ client: TresorClient, sent: SyncJoinAnswer? = nil, json: Bool, noWait: Bool) throws {
        var answer = try sent ?? client.syncJoinCheck()
        if !json, answer.state == .waiting {
            print(
                "Join request \(answer.requestID ?? "?") \(sent == nil ? "waits" : "sent"). "
                    + "On a device of the circle, run `tresor sync approve` and check it shows:")
            print("  \((answer.words ?? []).joined(separator: " "))")
        }
        if !noWait {
            StandardStream.showPrinted()
            let deadline = ContinuousClock.now + .seconds(600)
            while answer.state == .waiting, ContinuousClock.now < deadline {
                sleep(2)
                answer = try client.syncJoinCheck()
            }
        }
        if json { return Output.json(answer) }
        switch answer.state {
        case .trusted: print("Approved: this device is in the circle.")
        case .waiting:
            print(
                noWait
                    ? "Waiting for approval: `tresor sync join` again waits for it."
                    : "Still not approved after 10 minutes; `tresor sync join` waits again.")
        case .removed: throw ValidationError("the request was denied: `tresor sync leave` forgets it")
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract: "List devices asking to join, approve one, or deny it.",
            discussion: """
                Without REQUEST, lists the waiting requests with their words. With REQUEST, \
                approves it after the passcode (typed, or --passcode-stdin) — only when the words \
                equal those the asking device shows — or denies it with --deny. With --json, \
                prints the requests still waiting.
                """)
        @Argument(help: "The request to answer (its id).") var request: String?
        @Flag(help: "Deny the request instead.") var deny = false
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                guard let request else {
                    let requests = try client.syncRequests()
                    if options.json { return Output.json(SyncRequestsAnswer(requests: requests)) }
                    if requests.isEmpty { print("No device is asking to join.") }
                    for waiting in requests {
                        print("\(waiting.requestID)  \(waiting.deviceName)  \(waiting.words.joined(separator: " "))")
                    }
                    return
                }
                if deny {
                    try client.syncDeny(request)
                    if options.json { return Output.json(SyncRequestsAnswer(requests: try client.syncRequests())) }
                    return print("Denied.")
                }
                let passcode = try client.passcodeAgainIfSet(stdin: passcodeStdin, prompt: "Passcode to approve:")
                try client.syncApprove(request, passcode: passcode)
                if options.json { return Output.json(SyncRequestsAnswer(requests: try client.syncRequests())) }
                print("Approved.")
            }
        }
    }

    struct Include: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "include",
            abstract: "Sync the items a Secret Service client stored (its owner), or list those included.",
            discussion: """
                Items a Secret Service client stored (secret-tool, a browser, python keyring) never \
                sync until you include their owner — the group `tresor secret-service owners` names \
                — on this device: such items are often of this machine only (a browser's \
                safe-storage key), and any process running that client may read them wherever \
                they go. Included, its items go out with the next `tresor sync now`.
                """)
        @Argument(help: "The owner, as `tresor secret-service owners` names it (exe:/usr/bin/secret-tool, …).") var owner: String?
        @Flag(help: "List the owners included.") var list = false
        @OptionGroup var options: GlobalOptions

        func validate() throws {
            if (owner == nil) == !list { throw ValidationError("give an OWNER, or --list") }
        }

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                let owners = try owner.map { try client.syncSecretServiceOwner($0, include: true) } ?? client.syncSecretServiceOwners()
                try SyncCommand.printOwners(owners, json: options.json)
            }
        }
    }

    struct Exclude: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "exclude",
            abstract: "Stop syncing a Secret Service client's items: they leave the other devices and stay here.")
        @Argument(help: "The owner, as `tresor sync include --list` names it.") var owner: String
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                try SyncCommand.printOwners(try options.connect().syncSecretServiceOwner(owner, include: false), json: options.json)
            }
        }
    }

    static func printOwners(_ owners: [String], json: Bool) throws {
        if json { return Output.json(SyncOwnersAnswer(owners: owners)) }
        if owners.isEmpty { print("No Secret Service client's items sync.") }
        for owner in owners { print(owner) }
    }

    struct Recover: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recover",
            abstract: "Join with the recovery key, when no trusted device is left.",
            discussion: """
                Asks for the account's password and the recovery key (typed with echo off; with \
                --password-stdin and --recovery-key-stdin, one line each of standard input, the \
                password first).
                """)
        @Argument(help: "The server's address.") var server: String
        @Option(help: "The web account's name.") var account: String
        @Flag(help: "Read the account password from standard input.") var passwordStdin = false
        @Flag(help: "Read the recovery key from standard input.") var recoveryKeyStdin = false
        @Option(help: "What the other devices call this one (the host name by default).") var deviceName: String?
        @Option(help: SyncCommand.caFileHelp) var caFile: String?
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                var passwordInput = SecretInput(fromStandardInput: passwordStdin, flag: "--password-stdin")
                let password = try passwordInput.next("Password of \(account) on \(server):")
                var keyInput = SecretInput(fromStandardInput: recoveryKeyStdin, flag: "--recovery-key-stdin")
                let recoveryKey = try keyInput.next("Recovery key:")
                let answer = try client.syncRecover(
                    SyncRecoverRequestBody(
                        server: server, account: account, password: password, recoveryKey: recoveryKey, deviceName: deviceName,
                        caCertificates: try SyncCommand.certificateAuthorities(caFile)))
                if options.json { return Output.json(answer) }
                print("Recovered: this device is in the circle of \(account).")
            }
        }
    }

    struct Devices: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the devices of the circle.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let answer = try options.connect().syncDevices()
                if options.json { return Output.json(answer) }
                for device in answer.devices { print("\(device.deviceID)  \(device.name)\(device.isThisDevice ? "  (this device)" : "")") }
                if let why = answer.serverUnreachable {
                    StandardStream.error.write("The sync server cannot be reached (\(why)): this is the list this device holds.\n")
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove a device from the circle.",
            discussion: """
                The server refuses the device from now on and the circle key rolls: nothing \
                written afterwards opens with what it holds. It keeps what it already had. Needs \
                the passcode again (typed, or --passcode-stdin).
                """)
        @Argument(help: "The device's id or name (tresor sync devices).") var device: String
        @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                let passcode = try client.passcodeAgainIfSet(stdin: passcodeStdin, prompt: "Passcode to remove \(device):")
                let removed = try client.syncRemove(device, passcode: passcode)
                if options.json { return Output.json(removed) }
                print("Removed \(removed.name) (\(removed.deviceID)); the circle key rolled.")
            }
        }
    }

    struct Leave: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "leave", abstract: "Stop syncing this device (its keychain and notes stay).",
            discussion: """
                Changes made here that wait to go out are sent first when the server answers; \
                those it cannot take stay on this device until it joins a sync account again, and the command says how many. \
                When the server cannot be told, the other devices list this one until one of \
                them runs tresor sync remove with its name.
                """)
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let client = try options.connect()
                var before = try client.syncStatus()
                if Self.unsent(before) > 0, (try? client.syncNow(allowDeletions: false)) != nil { before = try client.syncStatus() }
                let left = try client.syncLeave()
                // On standard error in --json too: a script must know what the others will not see.
                let unsent = Self.unsent(before)
                if unsent > 0 {
                    StandardStream.error.write(
                        "\(unsent) \(unsent == 1 ? "change" : "changes") made on this device never reached the sync server: \(unsent == 1 ? "it stays" : "they stay") on this device, and \(unsent == 1 ? "goes" : "go") out when it joins a sync account again.\n"
                    )
                }
                if !left.serverTold, before.state != .removed {
                    StandardStream.error.write(
                        "The sync server could not be told: the other devices list this one until one of them runs `tresor sync remove \(before.deviceName ?? before.deviceID ?? "this device")`.\n"
                    )
                }
                if options.json { return Output.json(try client.syncStatus()) }
                print("This device left its sync account.")
            }
        }

        /// What this device made and the server has not taken: item changes, notes, attachments.
        static func unsent(_ status: SyncStatusAnswer) -> Int {
            (status.counters?.changesWaiting ?? 0) + (status.notesWaiting ?? 0) + (status.attachments?.toSend ?? 0)
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "This device's sync account.")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let status = try options.connect().syncStatus()
                if options.json { return Output.json(status) }
                guard status.joined else { return print("Not syncing (tresor sync join).") }
                print("Server:   \(status.server ?? "")")
                print("Account:  \(status.account ?? "")")
                print("Device:   \(status.deviceName ?? "") (\(status.deviceID ?? ""))")
                print("State:    \(status.state?.rawValue ?? "")\(status.requestID.map { " (request \($0))" } ?? "")")
                if let version = status.listVersion, let epoch = status.epoch { print("List:     version \(version), key epoch \(epoch)") }
                let removed = status.state == .removed
                // A removed device is no longer trusted, whatever the list it holds still says.
                for device in status.trustedDevices where !(removed && device.isThisDevice) {
                    print("Trusted:  \(device.name) (\(device.deviceID))\(device.isThisDevice ? ", this device" : "")")
                }
                if removed {
                    print(
                        "Removed:  another device removed this one: nothing goes out or comes in. `tresor sync leave`, then join again: what waits here goes out then"
                    )
                }
                if let counters = status.counters {
                    print(
                        "Waiting:  \(Words.counted(counters.changesWaiting, "change")) to send, \(counters.changesHeld) held (\(Words.counted(counters.deletionsHeld, "deletion")))"
                    )
                    if !counters.heldDeletions.isEmpty {
                        print("Deleting: these items, deleted at once on another device, wait for you (tresor sync now --allow-deletions):")
                        for held in counters.heldDeletions { print("  " + Conflicts.line(held)) }
                    }
                    print("Kept:     \(Words.counted(counters.conflictsKept, "conflict")) (tresor sync conflicts)")
                    if let notes = status.notesWaiting {
                        let held = status.noteDeletionsHeld ?? 0
                        print(
                            "Notes:    \(Words.counted(notes, "change")) to send\(held > 0 ? ", \(Words.counted(held, "deletion")) held (tresor sync now --allow-deletions)" : "")"
                        )
                    }
                    if let held = status.notesHeldUntilLocked, held > 0 {
                        print(
                            "          \(Words.counted(held, "note")) edited here, locked on another device since: sent once locked here (tresor sync now names them)"
                        )
                    }
                    if let attachments = status.attachments { Self.printAttachments(attachments) }
                    if let held = status.heldWhileLocked, held > 0 { print("Held:     \(held) records pulled while locked, applied at the unlock") }
                    print("Synced:   \(counters.lastSync.map { $0.formatted(.iso8601) } ?? "never")")
                    for record in counters.setAside {
                        print("Set aside: record \(record.recordID) (counter \(record.counter)) of device \(record.deviceID): \(record.reason)")
                    }
                }
                if status.inBackground == false {
                    print("Live:     off: this daemon syncs only at tresor sync now (syncInBackground is false in config.json)")
                }
                if let live = status.live {
                    print(
                        "Live:     \(live ? "listening to the server: changes arrive within seconds" : "not listening now: syncs after changes here, every five minutes and at tresor sync now")"
                    )
                }
                if let error = status.lastError { print("Failed:   \(error)") }
            }
        }

        /// The attachments' lines: what waits, and why the server refused any.
        static func printAttachments(_ attachments: SyncAttachmentsStatus) {
            print("Attachments: \(attachments.toSend) to send, \(attachments.toFetch) to fetch")
            if attachments.serverTakesNone { print("Attachments wait: the server takes none (an older Tresor server)") }
            for refused in attachments.refused {
                print("Refused:  attachment \(refused.attachmentID) (\(refused.code)): \(refused.reason)")
            }
        }
    }
}
