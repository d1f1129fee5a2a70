import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// `tresor daemon status|stop|restart|logs`: the home's tresord, however it was started.
struct DaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Show, stop, restart the daemon (tresord), and read its log.",
        discussion: """
            tresord is started by the first tresor command that needs it (its log then goes to \
            <home>/logs/tresord.log), by the systemd user unit tresord.service, or by hand. \
            These commands work whichever it was: through systemctl for the unit, with a \
            signal otherwise. To switch on the web client or the Secret Service, set "webPort" \
            or "secretService" in <home>/config.json and run `tresor daemon restart`.
            """,
        subcommands: [Status.self, Stop.self, Restart.self, Logs.self])

    /// What `tresor daemon status --json` prints (docs/CLI-JSON.md): the daemon's process, and
    /// what it serves with the same fields as `tresor status --json`.
    struct Report: ReshapedForJSON {
        var running: Bool
        var socket: String
        var home: String
        var pid: Int32?
        var version: String?
        var apiVersion: Int?
        var startedBy: DaemonProcess.Starter?
        var arguments: [String]?
        var log: String?
        /// What the daemon serves, its auto-lock clock and why its keybag is locked; nil when no
        /// daemon runs.
        var served: ServedSummary?
        /// Where a daemon of the home listens when it is not this environment's socket (words).
        var elsewhere: String?

        private enum CodingKeys: String, CodingKey {
            case running, socket, home, pid, version, apiVersion, startedBy, arguments, log
        }

        /// Its fields and those of ``served`` side by side, dates in ISO 8601.
        var cliJSON: JSONValue {
            get throws {
                guard case .object(var fields) = try JSONValue(encoding: self) else { return try JSONValue(encoding: self) }
                if let served, case .object(let summary) = try JSONValue(encoding: served) {
                    fields.merge(summary) { own, _ in own }
                }
                return JSONValue.object(fields).withStatusDates
            }
        }
    }

    /// Where a daemon that holds the home but does not answer on this environment's socket
    /// listens (it was started with another `XDG_RUNTIME_DIR`), said for the user; nil when none.
    static func elsewhere(_ paths: TresorPaths) -> String? {
        guard let listening = DaemonLock.socketElsewhere(for: paths) else { return nil }
        return "a tresord runs for \(paths.home.path) but listens at \(listening), not at \(paths.socket.path): it was started with "
            + "another XDG_RUNTIME_DIR (the folder above tresor/ in its socket's path) — run tresor with that XDG_RUNTIME_DIR"
    }

    /// The daemon answering on the home's socket (never starting one), and its process.
    static func running(_ options: GlobalOptions) -> (status: DaemonStatus, process: DaemonProcess?)? {
        guard let status = try? TresorClient.connect(paths: options.paths, startDaemon: false).status() else { return nil }
        return (status, DaemonProcess(pid: status.pid))
    }

    static func report(_ options: GlobalOptions) -> Report {
        let paths = options.paths
        guard let (status, process) = running(options) else {
            return Report(running: false, socket: paths.socket.path, home: paths.home.path, elsewhere: elsewhere(paths))
        }
        let log: String? =
            switch process?.startedBy {
            case .cli: paths.daemonLog.path
            case .systemd: "journalctl --user -u \(DaemonProcess.systemdUnit)"
            // One started otherwise writes to the home's log when it was given nowhere to write
            // (the session bus starts it so): said when its standard error is that file.
            case .manual, nil:
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(status.pid)/fd/2")) == paths.daemonLog.path
                    ? paths.daemonLog.path : nil
            }
        return Report(
            running: true, socket: paths.socket.path, home: status.home, pid: status.pid, version: status.daemonVersion,
            apiVersion: status.apiVersion, startedBy: process?.startedBy, arguments: process?.arguments, log: log,
            served: ServedSummary(status))
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract:
                "Whether tresord runs for this home, who started it, with which options, where it logs, and what it serves (as tresor status says it).",
            discussion: "Exits with status 3 when no daemon runs (and starts none).")
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let report = DaemonCommand.report(options)
                if options.json {
                    Output.json(report)
                } else {
                    print(Self.text(report))
                }
                if !report.running { throw ExitCode(3) }
            }
        }

        static func text(_ report: Report) -> String {
            guard report.running, let pid = report.pid else {
                if let elsewhere = report.elsewhere { return elsewhere + "." }
                return "tresord is not running for \(report.home) (no daemon on \(report.socket)); any tresor command starts it."
            }
            let starter =
                switch report.startedBy {
                case .systemd: "the systemd user unit \(DaemonProcess.systemdUnit)"
                case .cli: "tresor (a command, or the PAM module at login)"
                case .manual: "hand (or a script)"
                case nil: "another program"
                }
            var lines = [
                "Daemon:     tresord \(report.version ?? "?"), pid \(pid), API v\(report.apiVersion ?? 0)",
                "Home:       \(report.home)",
                "Socket:     \(report.socket)",
                "Started by: \(starter)",
            ]
            if let arguments = report.arguments, arguments.count > 1 { lines.append("Command:    \(arguments.joined(separator: " "))") }
            lines.append("Log:        \(report.log ?? "its own standard error")")
            // What it serves, in tresor status's own lines.
            if let served = report.served {
                lines += [served.lockStateLine, served.autoLockLine].compactMap { $0 } + served.servingLines
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stop",
            abstract: "Stop tresord: the keybag locks, secure sessions end, the web client and the Secret Service stop.",
            discussion:
                "Through systemctl when the systemd unit runs it (D-Bus activation may start it again on the next request), else with SIGTERM. The next tresor command starts it again."
        )
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                guard let (status, process) = DaemonCommand.running(options) else {
                    if let elsewhere = DaemonCommand.elsewhere(options.paths) { throw ValidationError(elsewhere + ", and stop it from there") }
                    if options.json { return Output.json(["stopped": false]) }
                    return print("tresord is not running.")
                }
                guard let process else { throw ValidationError("pid \(status.pid) answering on the socket is not a tresord of this user") }
                try process.stop()
                if options.json { return Output.json(["stopped": true]) }
                print("Stopped tresord (pid \(process.pid)).")
            }
        }
    }

    struct Restart: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restart",
            abstract: "Stop tresord and start it again, so that it reads config.json again.",
            discussion: """
                A daemon the systemd unit runs is restarted by systemctl; any other is started \
                again by tresor with the options it had (such as --web PORT), its log in \
                <home>/logs/tresord.log. A Secret Service it answered goes on: the new daemon is \
                handed this session's bus (DBUS_SESSION_BUS_ADDRESS), or with none the bus the old \
                one answered on. The keybag is locked afterwards, as after every start; what \
                `tresor secret-service trust` remembered ends with the old daemon.
                """)
        @OptionGroup var options: GlobalOptions

        func run() throws {
            try Output.run(options) {
                let paths = options.paths
                var kept: [String] = []
                let running = DaemonCommand.running(options)
                if let (status, process) = running {
                    guard let process else { throw ValidationError("pid \(status.pid) answering on the socket is not a tresord of this user") }
                    if process.startedBy == .systemd {
                        try DaemonProcess.systemctl(["restart", DaemonProcess.systemdUnit])
                    } else {
                        kept = process.optionsToKeep
                        try process.stop()
                    }
                }
                if DaemonCommand.running(options) == nil { try DaemonLauncher.start(paths: paths, arguments: kept) }
                let deadline = Date().addingTimeInterval(10)
                while DaemonCommand.running(options) == nil {
                    guard Date() < deadline else { throw TresorClientError.daemonDidNotStart(log: paths.daemonLog.path) }
                    usleep(20_000)
                }
                // A Secret Service the old daemon answered goes on: on this session's bus when
                // tresor runs in one (restarted to serve it), else on the bus it was handed.
                let sessionBus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
                let bus = running?.status.serving?.secretServiceBus.map { sessionBus ?? $0 }
                // The daemon restarted either way: a bus gone meanwhile (the session ended) is said, not a failure.
                let handed = bus.map { bus in
                    do {
                        return try options.connect().answerSecretService(onBus: bus).secretService
                    } catch {
                        return "not answered: \(Failure(error).text)"
                    }
                }
                let report = DaemonCommand.report(options)
                if options.json { return Output.json(report) }
                print("\(running != nil ? "Restarted" : "Started (none was running)") tresord (pid \(report.pid ?? 0)).")
                if let handed { print("Secret Service: \(handed).") }
            }
        }
    }

    struct Logs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "logs",
            abstract: "Print the end of tresord's log (it never holds a secret); --follow keeps printing.",
            discussion:
                "The log of a daemon tresor started is <home>/logs/tresord.log; the systemd unit's is in the journal (journalctl --user -u tresord.service)."
        )
        @OptionGroup var options: GlobalOptions
        @Option(name: [.customShort("n"), .long], help: "How many lines from the end.") var lines = 50
        @Flag(name: [.customShort("f"), .long], help: "Keep printing what is written (Ctrl-C to stop).") var follow = false

        func run() throws {
            try Output.run(options) {
                if let (_, process) = DaemonCommand.running(options), process?.startedBy == .systemd {
                    guard let journalctl = Clipboard.onPath("journalctl") else {
                        throw ValidationError("tresord runs under systemd, but journalctl is not on PATH")
                    }
                    let run = try CompanionProcess.run(
                        journalctl, arguments: ["--user", "-u", DaemonProcess.systemdUnit, "-n", String(lines), "--no-pager"])
                    return StandardStream.output.write(run.output)
                }
                let log = options.paths.daemonLog.path
                let fd = open(log, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw ValidationError("no log at \(log): tresord was never started by tresor for this home") }
                defer { close(fd) }
                let text = Data(readingToEndOf: fd)
                let all = text.split(separator: 0x0A, omittingEmptySubsequences: false)
                let tail = all.suffix(lines + (text.last == 0x0A ? 1 : 0))
                StandardStream.output.write(Data(tail.joined(separator: [0x0A])))
                guard follow else { return }
                while true {
                    usleep(250_000)
                    let more = Data(readingToEndOf: fd)
                    if !more.isEmpty { StandardStream.output.write(more) }
                }
            }
        }
    }
}
