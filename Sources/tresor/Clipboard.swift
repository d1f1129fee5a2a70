import ArgumentParser
import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// `--clip`: a secret copied to the desktop's clipboard — `wl-copy` on Wayland, `xclip` on
/// X11 — and cleared after ``clearSeconds`` (45 s, or `TRESOR_CLIP_TIME`), as `pass -c`
/// does. The secret reaches the tool on its standard input, never on a command line; the
/// clearing is done by a `tresor clear-clipboard` started in its own session, which clears
/// the clipboard only if it still holds the secret.
struct Clipboard {
    /// The tools of one kind of session: copy from standard input, paste, clear.
    let copy: [String]
    let paste: [String]
    let clear: [String]
    /// The clear command reads empty standard input (xclip) rather than taking a flag.
    let clearReadsInput: Bool

    /// Seconds until the clipboard is cleared: `TRESOR_CLIP_TIME`, else 45.
    static var clearSeconds: Int {
        ProcessInfo.processInfo.environment["TRESOR_CLIP_TIME"].flatMap { Int($0) }.map { max(1, $0) } ?? 45
    }

    /// The clipboard of this session: Wayland's when `WAYLAND_DISPLAY` is set and `wl-copy`
    /// is on `PATH`, else X11's when `DISPLAY` is set and `xclip` is.
    /// - Throws: `ValidationError` saying what is missing.
    static func current() throws -> Clipboard {
        let environment = ProcessInfo.processInfo.environment
        if environment["WAYLAND_DISPLAY"] != nil, let copy = onPath("wl-copy"), let paste = onPath("wl-paste") {
            return Clipboard(copy: [copy], paste: [paste, "--no-newline"], clear: [copy, "--clear"], clearReadsInput: false)
        }
        if environment["DISPLAY"] != nil, let xclip = onPath("xclip") {
            return Clipboard(
                copy: [xclip, "-selection", "clipboard"], paste: [xclip, "-selection", "clipboard", "-o"],
                clear: [xclip, "-selection", "clipboard"], clearReadsInput: true)
        }
        throw ValidationError("--clip needs a desktop session with wl-copy (Wayland, package wl-clipboard) or xclip (X11) on PATH")
    }

    /// Copies `secret` and starts the process that clears it.
    /// - Parameter secret: what to copy.
    /// - Returns: the seconds until it is cleared.
    /// - Throws: `ValidationError` when there is no clipboard or the tool fails.
    @discardableResult
    static func copy(_ secret: Data) throws -> Int {
        let clipboard = try current()
        let copied = try CompanionProcess.run(clipboard.copy[0], arguments: Array(clipboard.copy.dropFirst()), input: secret, collectsOutput: false)
        guard copied.exitStatus == 0 else {
            throw ValidationError("\(clipboard.copy[0].split(separator: "/").last ?? "the clipboard tool") failed; nothing was copied")
        }
        let seconds = clearSeconds
        try startClearing(secret, after: seconds)
        return seconds
    }

    /// Waits `seconds`, then clears the clipboard if it still holds `secret` (run by
    /// `tresor clear-clipboard`, in its own session).
    static func clear(ifStillHolding secret: Data, after seconds: Int) throws {
        let clipboard = try current()
        sleep(UInt32(seconds))
        let pasted = try CompanionProcess.run(clipboard.paste[0], arguments: Array(clipboard.paste.dropFirst()))
        guard pasted.exitStatus == 0, pasted.output == secret || pasted.output == secret + Data("\n".utf8) else { return }
        _ = try CompanionProcess.run(
            clipboard.clear[0], arguments: Array(clipboard.clear.dropFirst()),
            input: clipboard.clearReadsInput ? Data() : nil, collectsOutput: false)
    }

    /// Starts `tresor clear-clipboard --after SECONDS` in a session of its own, the secret on
    /// its standard input.
    private static func startClearing(_ secret: Data, after seconds: Int) throws {
        guard let me = ProcessImage.ownExecutablePath else {
            throw ValidationError("cannot find this program to clear the clipboard later")
        }
        var input: [Int32] = [-1, -1]
        guard pipe(&input) == 0 else { throw ValidationError("cannot clear the clipboard later: no pipe") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        ProcessSpawn.closeDescriptors(from: 3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, ProcessSpawn.newSessionFlag)
        let words: [String] = [me, "clear-clipboard", "--after", String(seconds)]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, me, &actions, &attributes, argv, environ)
        close(input[0])
        defer { close(input[1]) }
        guard spawned == 0 else { throw ValidationError("cannot clear the clipboard later: \(String(cString: strerror(spawned)))") }
        signal(SIGPIPE, SIG_IGN)
        _ = secret.write(toDescriptor: input[1])
    }

    /// The first executable `name` on `PATH`.
    static func onPath(_ name: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map { "\($0)/\(name)" }.first { access($0, X_OK) == 0 }
    }
}

/// `tresor clear-clipboard`: started by `--clip`, not by people.
struct ClearClipboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear-clipboard",
        abstract: "Clear the clipboard after a while if it still holds the secret on standard input (started by --clip).",
        shouldDisplay: false)

    @Option(help: "Seconds to wait.") var after: Int = 45

    func run() throws {
        // The secret stays in this process's memory until then: keep it out of core files.
        try? ProcessHardening.disableCoreDumps()
        let secret = StandardStream.input.readToEnd()
        guard !secret.isEmpty else { return }
        try Clipboard.clear(ifStillHolding: secret, after: after)
    }
}
