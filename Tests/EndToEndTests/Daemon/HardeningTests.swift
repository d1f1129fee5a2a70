import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The daemon turns core dumps off; the CLI asks for secrets on the terminal without echo.
@Suite(.blocksItsThread, .serialized) struct HardeningTests {
    @Test func theDaemonTurnsCoreDumpsOff() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let status = try harness.status()
        let limits = try String(contentsOfFile: "/proc/\(status.pid)/limits", encoding: .utf8)
        let coreLine = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        let fields = coreLine.split(separator: " ", omittingEmptySubsequences: true)
        #expect(fields.dropFirst(4).prefix(2) == ["0", "0"], "soft and hard RLIMIT_CORE must be 0: \(coreLine)")

        let findings = try TresorKitClient.connect(harness).doctor().findings
        let coreDumps = try #require(findings.first { $0.check == "core-dumps" })
        #expect(coreDumps.severity == .ok, "\(coreDumps.summary)")
    }

    /// Another process of the daemon's user reads none of its memory: the daemon is not dumpable,
    /// so its `/proc/<pid>/maps` and `mem` and `process_vm_readv` need privileges that user has
    /// not. Run as an unprivileged user (root could read anyway). Where Yama is on, it refuses a
    /// reader that is not an ancestor first; with the daemon dumpable, this reader (no ancestor)
    /// reads everything where Yama is off, as on this machine.
    @Test(.enabled(if: TestUser.available, "needs root, to run the daemon and the reader as another user"))
    func anotherProcessOfTheUserReadsNoneOfTheDaemonsMemory() throws {
        let harness = try Harness(user: try TestUser.shared.get())
        try harness.startDaemon()
        let pid = try harness.status().pid
        let reader = """
            import ctypes, sys
            pid = int(sys.argv[1])
            # The daemon's first readable mapping, when its maps can be read at all.
            start = 0x400000
            try:
                for line in open("/proc/%d/maps" % pid):
                    fields = line.split()
                    if fields[1].startswith("r"):
                        start = int(fields[0].split("-")[0], 16)
                        break
                print("maps read")
            except OSError as error:
                print("maps refused", error.errno)
            try:
                mem = open("/proc/%d/mem" % pid, "rb")
                print("mem opened")
            except OSError as error:
                print("mem refused", error.errno)
            class IOVec(ctypes.Structure):
                _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]
            buffer = ctypes.create_string_buffer(64)
            local, remote = IOVec(ctypes.cast(buffer, ctypes.c_void_p), 64), IOVec(start, 64)
            libc = ctypes.CDLL(None, use_errno=True)
            count = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
            print("vm read" if count > 0 else "vm refused %d" % ctypes.get_errno())
            """
        let read = try harness.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", reader, "\(pid)"])
        #expect(read.succeeded, "\(read.stderr)")
        for refused in ["maps refused", "mem refused", "vm refused"] {
            #expect(read.stdout.contains(refused), "a process of the user could read the daemon's memory: \(read.stdout)")
        }
    }

    /// Drives `tresor unlock` on a pseudo-terminal: types the passcode after the prompt
    /// appears and checks the screen never shows it.
    @Test func thePromptDoesNotEcho() throws {
        let harness = try Harness()
        let passcode = "e2e-tty-\(UUID().uuidString.prefix(8))"
        harness.secrets = [passcode]
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)

        let screen = try harness.onTerminal(["unlock"], answers: [("Passcode:", passcode)], timeout: 20)
        #expect(screen.text.contains("Passcode:"))
        #expect(screen.text.contains("Keybag unlocked."), "\(screen.text)")
        #expect(!screen.text.contains(passcode), "the typed passcode was echoed")
        #expect(try harness.status().keybag == .unlocked)
        // The transcript holds the input we fed python, which is not tresor's output: check the rest.
        harness.secrets = []
        #expect(!harness.daemonLog.contains(passcode))
    }

    @Test func withoutATerminalOrStdinFlagTheCLIRefusesToGuess() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let result = try harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"), ["--wait", Harness.binaries.appendingPathComponent("tresor").path, "init"], input: "")
        #expect(result.status == 1)
        #expect(result.stderr.contains("--passcode-stdin"))
        #expect(try harness.status().keybag == .notInitialized)
    }
}
