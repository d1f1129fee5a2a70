import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The running `tresord` of a home, as `/proc` shows it: how it was started, with which
/// arguments, and how to stop it.
struct DaemonProcess {
    /// Who started the daemon.
    enum Starter: String, Encodable {
        /// The systemd user unit `tresord.service` (or D-Bus activation through it).
        case systemd
        /// `tresor`, which starts it in a session of its own with its log in the home.
        case cli
        /// Someone on a terminal, or a script (`scripts/start`, a test).
        case manual
    }

    let pid: Int32
    /// Its command line, program name first.
    let arguments: [String]
    let startedBy: Starter

    /// The unit systemd runs it as.
    static let systemdUnit = "tresord.service"

    /// What `/proc/<pid>` says of the daemon `pid`; nil when no such process runs or it is
    /// not `tresord`.
    init?(pid: Int32) {
        guard let cmdline = Self.read("/proc/\(pid)/cmdline"), !cmdline.isEmpty else { return nil }
        let arguments = cmdline.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        guard let program = arguments.first, program.split(separator: "/").last == "tresord" else { return nil }
        self.pid = pid
        self.arguments = arguments
        let cgroup = Self.read("/proc/\(pid)/cgroup").map { String(decoding: $0, as: UTF8.self) } ?? ""
        if cgroup.contains("/\(Self.systemdUnit)") {
            startedBy = .systemd
        } else if getsid(pid) == pid && getpgid(pid) == pid {
            startedBy = .cli
        } else {
            startedBy = .manual
        }
    }

    /// Its options other than `--home` (which the launcher gives), to start it again alike.
    var optionsToKeep: [String] {
        var kept: [String] = []
        var words = arguments.dropFirst().makeIterator()
        while let word = words.next() {
            if word == "--home" { _ = words.next(); continue }
            if word.hasPrefix("--home=") { continue }
            kept.append(word)
        }
        return kept
    }

    /// Whether the process has ended (a zombie not yet reaped by its parent counts as ended).
    var hasEnded: Bool { ProcessStat.hasEnded(pid) }

    /// Stops the daemon — through systemd when it runs it, else with SIGTERM — and waits for
    /// it to end (up to `seconds`; then SIGKILL).
    /// - Throws: `ValidationError` when it cannot be stopped.
    func stop(waiting seconds: Double = 10) throws {
        if startedBy == .systemd {
            try Self.systemctl(["stop", Self.systemdUnit])
        } else if kill(pid, SIGTERM) != 0 && errno != ESRCH {
            throw ValidationError("cannot stop tresord (pid \(pid)): \(String(cString: strerror(errno)))")
        }
        let deadline = Date().addingTimeInterval(seconds)
        while !hasEnded {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                usleep(100_000)
                break
            }
            usleep(20_000)
        }
    }

    /// Runs `systemctl --user ARGUMENTS`.
    /// - Throws: `ValidationError` with its complaint when it fails.
    static func systemctl(_ arguments: [String]) throws {
        guard let systemctl = Clipboard.onPath("systemctl") else { throw ValidationError("tresord runs under systemd, but systemctl is not on PATH") }
        let run = try CompanionProcess.run(systemctl, arguments: ["--user"] + arguments)
        guard run.exitStatus == 0 else {
            let complaint = String(decoding: run.errors.prefix(2048), as: UTF8.self).trimmingWhitespace()
            throw ValidationError("systemctl --user \(arguments.joined(separator: " ")) failed: \(complaint)")
        }
    }

    private static func read(_ path: String) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return Data(readingToEndOf: fd)
    }
}
