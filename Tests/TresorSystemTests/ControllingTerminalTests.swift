import Foundation
import Testing
import TresorTestSupport

@testable import TresorSystem

/// What a terminal session is bound to: a process's session, its controlling terminal and its
/// session leader's start, read from `/proc/<pid>/stat`.
@Suite(.blocksItsThread) struct ControllingTerminalTests {
    /// A command name may hold spaces and parentheses; the fields are counted after the last `)`.
    @Test func fieldsAreCountedAfterTheCommandName() throws {
        let line = "4242 (evil) 7 0 0 (x) S 1 4242 4200 34819 4242 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0\n"
        let stat = try #require(ProcessStat(parsing: line))
        #expect(stat.session == 4200)
        #expect(stat.terminal == 34819)
        #expect(stat.startTime == 987654)
        #expect(stat.parent == 1 && stat.processGroup == 4242 && stat.terminalForegroundGroup == 4242)
        #expect(stat.state == UInt8(ascii: "S"))
        #expect(ProcessStat(parsing: "4242 (name) S 1 2") == nil, "too few fields")
        #expect(ProcessStat(parsing: "no parenthesis at all") == nil)
    }

    /// A process is ended once it is gone or a zombie its parent has not reaped.
    @Test func aZombieOrAGoneProcessHasEnded() throws {
        #expect(!ProcessStat.hasEnded(getpid()))
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/true", nil, nil, &argv, environ) == 0)
        // Not reaped yet: a zombie once it exits.
        let deadline = Date().addingTimeInterval(10)
        while !ProcessStat.hasEnded(pid), Date() < deadline { usleep(10_000) }
        #expect(ProcessStat.hasEnded(pid), "a zombie")
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(ProcessStat.hasEnded(pid), "gone")
    }

    @Test func terminalsAreNamedAsTtyNamesThem() {
        func named(major: UInt64, minor: UInt64) -> String {
            ControllingTerminal(session: 1, device: (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12), leaderStart: 0).name
        }
        #expect(named(major: 136, minor: 3) == "pts/3")
        #expect(named(major: 136, minor: 300) == "pts/300")
        #expect(named(major: 137, minor: 4) == "pts/260")
        #expect(named(major: 4, minor: 2) == "tty2")
        #expect(named(major: 188, minor: 0) == "terminal 188:0")
    }

    /// `setsid` leaves a process without a controlling terminal: no terminal session can be its.
    @Test func aProcessInANewSessionHasNoTerminal() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["sleep", "5"]
        try process.run()
        defer { kill(process.processIdentifier, SIGKILL) }
        usleep(200_000)
        // setsid forks when it is a group leader; the sleeping process is the pid or its child.
        let candidates =
            [process.processIdentifier]
            + ((try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(process.processIdentifier)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
        #expect(candidates.allSatisfy { ControllingTerminal.of(pid: $0) == nil })
        #expect(ControllingTerminal.of(pid: Int32.max) == nil, "no such process")
    }

    /// Inside `script(1)` a process has a terminal, and two commands of one terminal share it.
    @Test func commandsOfOneTerminalShareIt() throws {
        // `$$` is the shell's pid: the first line is the shell's, the second a command it ran.
        let lines = try Self.statLines(inScript: "cat /proc/$$/stat; echo; sh -c 'cat /proc/$$/stat'")
        #expect(lines[0].terminal != 0 && lines[0].terminal == lines[1].terminal)
        #expect(lines[0].session == lines[1].session)
    }

    /// With job control on, a background job is a process group of its own, and the terminal's
    /// foreground group is the shell's: the job is not where the user types.
    @Test func aBackgroundJobIsNotInTheForeground() throws {
        let lines = try Self.statLines(inScript: "set -m; sh -c 'cat /proc/$$/stat'; echo; sh -c 'cat /proc/$$/stat' & wait")
        #expect(lines[0].processGroup == lines[0].terminalForegroundGroup, "the foreground command")
        #expect(lines[1].processGroup != lines[1].terminalForegroundGroup, "the background job")
        #expect(lines[0].terminal == lines[1].terminal, "on the same terminal")
        #expect(ControllingTerminal.inForeground(pid: Int32.max) == nil, "no such process")
    }

    /// Runs `command` with `sh` inside `script(1)` (a terminal of its own) and parses the two
    /// `/proc/<pid>/stat` lines it prints.
    static func statLines(inScript command: String) throws -> [ProcessStat] {
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", command, "/dev/null"]
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilEnded()
        let lines = text.split(whereSeparator: \.isNewline).compactMap { ProcessStat(parsing: String($0)) }
        try #require(lines.count == 2, "\(text)")
        return lines
    }
}
