import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Starts `tresord` for a home when no daemon answers, detached in its own session, with its
/// log in `<home>/logs/tresord.log`.
package enum DaemonLauncher {
    /// Starts `tresord --home HOME` and returns at once (the socket opens a moment later).
    /// - Parameters:
    ///   - paths: the home.
    ///   - arguments: more of the daemon's options (`tresor daemon restart` keeps those a
    ///     daemon ran with, such as `--web PORT`).
    /// - Throws: ``TresorClientError/daemonExecutableNotFound`` or
    ///   ``TresorClientError/daemonDidNotStart(log:)``.
    package static func start(paths: TresorPaths, arguments extra: [String] = []) throws {
        guard let executable = CompanionExecutable.path(CompanionExecutable.daemon) else { throw TresorClientError.daemonExecutableNotFound }
        var log = try paths.openDaemonLog()
        // A home on a read-only file system still serves reads; its daemon's log goes nowhere.
        if log < 0 && errno == EROFS { log = open("/dev/null", O_WRONLY | O_CLOEXEC) }
        guard log >= 0 else { throw TresorClientError.daemonDidNotStart(log: paths.daemonLog.path) }
        defer { close(log) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, log, 1)
        posix_spawn_file_actions_adddup2(&actions, log, 2)
        // Whoever runs the CLI may read its output to the end: the daemon must hold no copy of it.
        ProcessSpawn.closeDescriptors(from: 3, in: &actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own session: a Ctrl-C meant for the CLI must not stop the daemon.
        posix_spawnattr_setflags(&attributes, ProcessSpawn.newSessionFlag)

        let arguments = [executable, "--home", paths.home.path] + extra
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // Only what the daemon needs: a loader variable of whoever ran this CLI must not reach it.
        let environment = DaemonEnvironment.forDaemon(from: ProcessInfo.processInfo.environment)
        var envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        guard result == 0 else { throw TresorClientError.daemonDidNotStart(log: paths.daemonLog.path) }
    }

}

/// Tresor's executables, installed together: found beside the running executable (a build
/// folder or an install prefix), else on PATH.
package enum CompanionExecutable {
    /// The daemon.
    package static let daemon = "tresord"
    /// Reads an Apple Notes database for `tresor import apple-notes`.
    package static let appleNotesReader = "tresor-read-apple-notes"
    /// Reads another Secret Service provider's items for `tresor import secret-service`.
    package static let secretServiceReader = "tresor-read-secret-service"
    /// Moves a home's web accounts onto a server for `tresor server migrate`.
    package static let serverMigrator = "tresor-server-migrate"

    /// The path of the executable `name`, if one is found: the one beside the running program,
    /// else the first on `PATH` (docs/SECURITY.md, "Applications using TresorKit").
    /// - Parameter name: the executable's file name, such as ``daemon``.
    /// - Returns: the path of one this process may execute, or nil.
    package static func path(_ name: String) -> String? {
        let me = ProcessImage.ownExecutablePath
        return path(
            name, besides: me.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path },
            searchPath: ProcessInfo.processInfo.environment["PATH"])
    }

    /// The executable `name` in `directory`, else in the first folder of `searchPath` (a
    /// colon-separated list, as `PATH`) that holds one.
    /// - Parameters:
    ///   - name: the executable's file name.
    ///   - directory: the folder looked in first (the running program's), or nil.
    ///   - searchPath: the folders looked in next, in order, or nil.
    /// - Returns: the path of the first file there that this process may execute, or nil.
    package static func path(_ name: String, besides directory: String?, searchPath: String?) -> String? {
        var candidates: [String] = []
        if let directory { candidates.append(directory + "/" + name) }
        for folder in (searchPath ?? "").split(separator: ":") {
            candidates.append(String(folder) + "/" + name)
        }
        return candidates.first { access($0, X_OK) == 0 }
    }
}
