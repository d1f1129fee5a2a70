import Foundation
import Synchronization
import Testing
import TresorKit
import TresorProtocol
import TresorSystem
import TresorTestSupport

/// A temporary Tresor home with the real `tresor` and `tresord` binaries run against it.
///
/// Every command's output and the daemon's log (at trace level) are kept, so each test ends
/// by checking that none of its secrets appeared anywhere (docs/SECURITY.md, "How to read the
/// citations"; docs/ARCHITECTURE.md, "Why it is built this way").
final class Harness {
    let root: URL
    let paths: TresorPaths
    let environment: [String: String]
    /// Secrets the test used; none may appear in any output or log.
    var secrets: [String] = []
    private(set) var transcript = ""
    private var daemon: Process?
    /// The user every process of this harness runs as (the daemon, the CLI, clients), when not the
    /// test runner's own.
    let user: TestUser?
    /// Where `tresor` and `tresord` are run from: the build folder, or links the user can reach.
    let binaries: URL
    /// The disk the home is mounted from, when the test cuts its power or makes it fail.
    private(set) var disk: PowerCutDisk?

    /// The folder of the built executables (`TresordFixture.binaries`: `$TRESOR_BIN_DIR`, else the
    /// nearest folder above the test runner that holds `tresord`).
    static let binaries: URL = TresordFixture.binaries

    /// - Parameters:
    ///   - base: where to make the temporary root; `/tmp` is 0700 here, so tests that
    ///     need another user to reach the socket pass `/var/tmp`.
    ///   - environment: added to every process's environment, the daemon's too (a private
    ///     D-Bus's `DBUS_SESSION_BUS_ADDRESS`).
    ///   - user: another user to run every process as (the root folder is then in `/var/tmp`,
    ///     and theirs).
    ///   - onPowerCutDisk: whether the home is a ``PowerCutDisk`` (the socket and the rest stay outside).
    ///   - productionKeyDerivation: whether the daemon derives new keys at production's PBKDF2
    ///     count; otherwise at `TresordFixture.cheapKeyDerivation`'s (docs/ARCHITECTURE.md, "Tests").
    init(
        base: String? = nil, configuration: String? = nil, environment extra: [String: String] = [:], user: TestUser? = nil,
        onPowerCutDisk: Bool = false, productionKeyDerivation: Bool = false
    ) throws {
        let parent = URL(fileURLWithPath: user == nil ? base ?? FileManager.default.temporaryDirectory.path : "/var/tmp")
        root = parent.appendingPathComponent("tresor-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        self.user = user
        binaries = user == nil ? Self.binaries : try TestUser.binaries.get()
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        if !productionKeyDerivation { environment.merge(TresordFixture.cheapKeyDerivation) { $1 } }
        if user != nil { environment["HOME"] = root.path }
        environment["TRESOR_HOME"] = root.appendingPathComponent("home").path
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
        environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        try FileManager.default.createDirectory(at: root.appendingPathComponent("run"), withIntermediateDirectories: true)
        self.environment = environment
        paths = TresorPaths(environment: environment)
        if onPowerCutDisk {
            disk = try PowerCutDisk(mountpoint: paths.home, scratch: root.appendingPathComponent("disk"))
        }
        if let configuration {
            try SecureFiles.createDirectory(paths.home)
            try SecureFiles.writeAtomically(Data(configuration.utf8), to: paths.config)
        }
        try user?.own(root)
        LiveHarnesses.opened(root)
    }

    /// A harness whose daemon runs, its home initialised with `passcode`: how most tests start.
    /// - Parameters:
    ///   - secrets: besides the passcode, what no output or log of the test may show.
    ///   - daemonArguments: added to `tresord`'s command line.
    ///   - productionKeyDerivation: whether the daemon derives keys at production's PBKDF2 count.
    /// - Returns: the harness.
    /// - Throws: when the daemon does not start or `tresor init` fails.
    static func initialized(
        passcode: String, secrets: [String] = [], daemonArguments: [String] = [], productionKeyDerivation: Bool = false
    ) throws -> Harness {
        let harness = try Harness(productionKeyDerivation: productionKeyDerivation)
        harness.secrets = [passcode] + secrets
        try harness.startDaemon(extraArguments: daemonArguments)
        let initialized = try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n")
        guard initialized.succeeded else { throw HarnessError.daemonDidNotStart("tresor init failed: \(initialized.stderr)") }
        return harness
    }

    /// Set once a test has run the scan itself.
    private var scanned = false

    deinit {
        // Every test that uses the harness gets the secret scan, whether or not it asked.
        if !scanned && !secrets.isEmpty { try? expectNoSecretLeaked() }
        stopDaemon()
        disk?.unmount()
        try? FileManager.default.removeItem(at: root)
        LiveHarnesses.closed(root)
    }

    typealias Result = TestProcess.Result

    /// Runs `tresor` with `arguments`, feeding `input` on standard input.
    @discardableResult
    func tresor(_ arguments: [String], input: String? = nil) throws -> Result {
        try run(binaries.appendingPathComponent("tresor"), arguments, input: input)
    }

    /// Runs `tresord --home HOME` with `arguments` to its end (one that refuses to start), for at
    /// most `timeout` seconds.
    func tresord(_ arguments: [String], timeout: TimeInterval = 30) throws -> Result {
        try run(binaries.appendingPathComponent("tresord"), ["--home", paths.home.path] + arguments, timeout: timeout)
    }

    /// `tresor … --json`, decoded.
    func json<T: Decodable>(_ type: T.Type, _ arguments: [String], input: String? = nil) throws -> T {
        let result = try tresor(arguments + ["--json"], input: input)
        return try CLIJSON.decode(T.self, from: Data(result.stdout.utf8))
    }

    func status() throws -> DaemonStatus { try json(DaemonStatus.self, ["status"]) }

    /// - Parameters:
    ///   - timeout: a process still running after that many seconds (``commandTimeLimit`` unless
    ///     given) is killed and `run` throws `HarnessError.timedOut`.
    ///   - revealing: what this command is meant to print (a secret a client looked up), kept out
    ///     of the transcript so that the secret scan still checks every other output.
    func run(
        _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
        timeout: TimeInterval? = nil, revealing: [String] = []
    ) throws -> Result {
        let (program, programArguments) = user?.wrapping(executable, arguments) ?? (executable, arguments)
        let limit = timeout ?? Self.commandTimeLimit
        let (result, timedOut) = try Self.execute(
            program, programArguments, input: input, environment: environment ?? self.environment, timeout: limit)
        record(executable, arguments, output: result.stdout + result.stderr, revealing: revealing)
        if timedOut {
            throw HarnessError.timedOut("\(executable.lastPathComponent) \(arguments.joined(separator: " "))", after: limit)
        }
        return result
    }

    /// How long a command the harness runs may take unless its test says otherwise: far above
    /// what any command here takes (a client gives up on a silent daemon after 60 s), so a
    /// command that hangs fails its own test, naming itself, instead of the whole run.
    static let commandTimeLimit: TimeInterval = 300

    /// Runs a process to its end and records nothing (``run(_:_:input:environment:timeout:revealing:)``
    /// records); a fixture without a harness (a private bus) uses it directly. With a `timeout`,
    /// a process still running then is killed, and `timedOut` says so.
    static func execute(
        _ executable: URL, _ arguments: [String], input: String? = nil, environment: [String: String], timeout: TimeInterval? = nil
    ) throws -> (result: Result, timedOut: Bool) {
        try TestProcess.run(executable, arguments, input: input, environment: environment, timeout: timeout)
    }

    /// Adds a command and its output to the transcript the secret scan reads, with each of
    /// `revealing` (what the command was meant to print) replaced by a placeholder.
    func record(_ executable: URL, _ arguments: [String], output: String, revealing: [String] = []) {
        let shown = revealing.filter { !$0.isEmpty }.reduce(output) { $0.replacingOccurrences(of: $1, with: "<revealed>") }
        transcript += "$ \(executable.lastPathComponent) \(arguments.joined(separator: " "))\n\(shown)"
    }

    // MARK: The daemon

    /// Starts `tresord` at trace level (so the log test sees everything it could ever log)
    /// and waits until it answers; its output goes to the home's log, or nowhere.
    func startDaemon(extraArguments: [String] = [], discardingItsOutput: Bool = false) throws {
        try SecureFiles.createDirectory(paths.daemonLog.deletingLastPathComponent())
        if !FileManager.default.fileExists(atPath: paths.daemonLog.path) {
            try #require(FileManager.default.createFile(atPath: paths.daemonLog.path, contents: nil, attributes: [.posixPermissions: 0o600]))
        }
        try user?.own(root)
        // A home on a read-only file system (ReadOnlyHomeTests) keeps no log of this daemon.
        // Discarding it, as the session bus does when it starts tresord.
        let log = discardingItsOutput ? FileHandle.nullDevice : (try? FileHandle(forWritingTo: paths.daemonLog)) ?? FileHandle.nullDevice
        log.seekToEndOfFile()
        let process = Process()
        let arguments = ["--home", paths.home.path, "--log-level", "trace"] + extraArguments
        (process.executableURL, process.arguments) =
            user?.wrapping(binaries.appendingPathComponent("tresord"), arguments)
            ?? (binaries.appendingPathComponent("tresord"), arguments)
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        try process.run()
        daemon = process
        LiveHarnesses.started(process.processIdentifier)
        let deadline = Date().addingTimeInterval(15)
        // The daemon serves its own uid only: another user's is asked through `tresor status` as that user.
        while user == nil
            ? (try? TresorClient.connect(paths: paths, startDaemon: false)) == nil : !((try? tresor(["daemon", "status"]))?.succeeded ?? false)
        {
            guard process.isRunning, Date() < deadline else { throw HarnessError.daemonDidNotStart(daemonLog) }
            usleep(20_000)
        }
    }

    /// SIGKILLs the daemon: no chance to clean up, as in a crash.
    func killDaemon() {
        guard let daemon, daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilEnded()
        LiveHarnesses.ended(daemon.processIdentifier)
        self.daemon = nil
    }

    /// Stops the daemon with SIGTERM, as a user's service manager does; one that has not ended
    /// a minute later is killed (its log says where its shutdown stopped).
    func stopDaemon() {
        if let daemon, daemon.isRunning {
            daemon.terminate()
            if !daemon.waitUntilEnded(timeout: 60) { killDaemon() }
        }
        if let daemon { LiveHarnesses.ended(daemon.processIdentifier) }
        daemon = nil
        // A daemon the CLI started on its own is not our child: stop it by its pid.
        if let status = try? TresorClient.connect(paths: paths, startDaemon: false).status() {
            kill(status.pid, SIGKILL)
            usleep(100_000)
        }
    }

    var daemonIsRunning: Bool { daemon?.isRunning ?? false }

    var daemonLog: String { (try? String(contentsOf: paths.daemonLog, encoding: .utf8)) ?? "" }

    /// Every byte of every file in the home, for plaintext searches.
    func homeFiles() throws -> [(URL, Data)] {
        let enumerator = FileManager.default.enumerator(at: paths.home, includingPropertiesForKeys: [.isRegularFileKey])
        var files: [(URL, Data)] = []
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                files.append((url, try Data(contentsOf: url)))
            }
        }
        return files
    }

    /// Every file of the home with its bytes, by path inside the home: what "unchanged" is
    /// compared on. But the daemon's log folder, and SQLite's `-shm` files: the shared-memory index
    /// of a WAL, rebuilt from the WAL when missing, in which every read — `tresor status` as much as
    /// a restore's — marks where it reads. The databases, their WAL, the keybag, the attachment
    /// files: byte for byte.
    func homeSnapshot() throws -> [String: Data] {
        let logs = paths.daemonLog.deletingLastPathComponent().path + "/"
        var snapshot: [String: Data] = [:]
        for (url, data) in try homeFiles() where !url.path.hasPrefix(logs) && !url.path.hasSuffix("-shm") {
            snapshot[String(url.path.dropFirst(paths.home.path.count))] = data
        }
        return snapshot
    }

    /// No secret of this test in any command output, in the daemon's log, or in any home file.
    func expectNoSecretLeaked(sourceLocation: SourceLocation = #_sourceLocation) throws {
        scanned = true
        let texts = [("command output", transcript), ("daemon log", daemonLog)]
        let files = try homeFiles()
        for secret in secrets {
            for (name, text) in texts {
                #expect(!text.contains(secret), "a secret appeared in the \(name)", sourceLocation: sourceLocation)
            }
            for (url, data) in files {
                #expect(data.range(of: Data(secret.utf8)) == nil, "a secret appeared in \(url.lastPathComponent)", sourceLocation: sourceLocation)
            }
        }
    }
}

enum HarnessError: Error {
    case daemonDidNotStart(String)
    case timedOut(String, after: TimeInterval)
}

func mode(of path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
}
