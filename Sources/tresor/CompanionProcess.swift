import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// A companion executable run to its end, its standard output and error collected (input is
/// `/dev/null`). `posix_spawn` directly: Foundation's `Process` lives in the part of Foundation
/// the CLI does not link (BENCHMARKS.md, "Measured design choices").
struct CompanionProcess {
    /// How it ended: its exit status, or nil when a signal ended it.
    var exitStatus: Int32?
    var output: Data
    var errors: Data

    /// Runs `executable` with `arguments` and this process's environment.
    /// - Parameters:
    ///   - executable: its path.
    ///   - arguments: its arguments (never a secret: `ps` shows them).
    ///   - input: written to its standard input (then closed); nil: `/dev/null`.
    ///   - collectsOutput: false for a program that leaves a child running with its outputs
    ///     (a clipboard tool serving the selection): its outputs go to `/dev/null`, and only
    ///     its own exit is waited for.
    /// - Returns: how it ended and what it wrote.
    /// - Throws: ``SpawnError`` when it cannot be started.
    static func run(_ executable: String, arguments: [String], input: Data? = nil, collectsOutput: Bool = true) throws -> CompanionProcess {
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1], inputPipe: [Int32] = [-1, -1]
        guard pipe(&outputPipe) == 0 else { throw SpawnError(executable: executable, code: errno) }
        guard pipe(&errorPipe) == 0 else {
            outputPipe.forEach { close($0) }
            throw SpawnError(executable: executable, code: errno)
        }
        if input != nil, pipe(&inputPipe) != 0 {
            (outputPipe + errorPipe).forEach { close($0) }
            throw SpawnError(executable: executable, code: errno)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if collectsOutput {
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
            posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        for fd in outputPipe + errorPipe + inputPipe where fd >= 0 { posix_spawn_file_actions_addclose(&actions, fd) }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(outputPipe[1])
        close(errorPipe[1])
        if input != nil { close(inputPipe[0]) }
        defer { close(outputPipe[0]); close(errorPipe[0]) }
        guard spawned == 0 else {
            if input != nil { close(inputPipe[1]) }
            throw SpawnError(executable: executable, code: spawned)
        }
        if let input {
            // A child that exits without reading must not kill this process with SIGPIPE.
            signal(SIGPIPE, SIG_IGN)
            _ = input.write(toDescriptor: inputPipe[1])
            close(inputPipe[1])
        }

        // Both pipes are read to their ends at once: a child that fills standard error must
        // not block there while this waits for its output.
        let errors = PipeDrain(errorPipe[0])
        let output = Data(readingToEndOf: outputPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7F == 0
        return CompanionProcess(exitStatus: exited ? (status >> 8) & 0xFF : nil, output: output, errors: errors.data())
    }

    struct SpawnError: Error, CustomStringConvertible {
        let executable: String
        let code: Int32
        var description: String { "cannot run \(executable): \(String(cString: strerror(code)))" }
    }
}

extension CompanionProcess {
    /// Runs the companion executable `name` (a reader installed beside `tresor`) and decodes the
    /// JSON it wrote on standard output. Its complaint on standard error becomes this command's
    /// error (readers write no secret there).
    /// - Parameters:
    ///   - type: what it writes.
    ///   - name: its file name (``CompanionExecutable``).
    ///   - arguments: its arguments.
    /// - Returns: what it wrote, decoded with ``APICoding/decoder``.
    /// - Throws: ``APIError``: `param` with its complaint when it fails, `internal` when it is
    ///   missing or writes what does not decode.
    static func readJSON<T: Decodable>(_ type: T.Type, from name: String, arguments: [String] = []) throws -> T {
        guard let reader = CompanionExecutable.path(name) else {
            throw APIError(.internal, "\(name) is not installed beside tresor")
        }
        let run = try CompanionProcess.run(reader, arguments: arguments)
        let complaint = String(decoding: run.errors.prefix(4096), as: UTF8.self).trimmingWhitespace()
        guard run.exitStatus == 0 else {
            let status = run.exitStatus.map { "status \($0)" } ?? "ended by a signal"
            throw APIError(.param, complaint.isEmpty ? "\(name) stopped (\(status))" : complaint)
        }
        do {
            return try APICoding.decoder.decode(T.self, from: run.output)
        } catch {
            throw APIError(.internal, "\(name) wrote output that does not decode: \(error)")
        }
    }
}

/// An executable named on the command line (`--exe PATH`), checked before anything is asked
/// for: a mistyped path fails at once, not after the passcode.
/// - Parameters:
///   - path: as given.
///   - searchingPath: whether a bare name is looked for on `PATH` first, as a shell runs it.
/// - Returns: its absolute, standardised path.
/// - Throws: `ValidationError` when no executable regular file is there.
func existingExecutable(_ path: String, searchingPath: Bool = false) throws -> String {
    // A bare name, as a shell takes it: found on PATH first (`secret-tool`), else here.
    if searchingPath, !path.contains("/"), let found = Clipboard.onPath(path) { return try existingExecutable(found) }
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
    var info = stat()
    guard stat(absolute, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(absolute, X_OK) == 0 else {
        throw ValidationError("no executable file at \(absolute)")
    }
    return absolute
}
