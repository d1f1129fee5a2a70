import Foundation
import Testing
import TresorSystem
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

// Real Secret Service clients, driven through their own command lines: secret-tool
// (libsecret), git's libsecret credential helper, and Python's keyring, secretstorage and a
// raw python3-dbus script (Tests/Fixtures/SecretService). Secrets go on standard input, never
// on a command line; every run is bounded and recorded in the harness's transcript, with the
// secret a lookup was meant to print kept out of it so the scan still checks all the rest.

/// The bound on one client process: far beyond any healthy run, short of a hung test.
let clientTimeout: TimeInterval = 60

/// `secret-tool` — /usr/bin/secret-tool, or a copy of it that the daemon sees as another application.
struct SecretTool {
    static let system = URL(fileURLWithPath: "/usr/bin/secret-tool")

    let harness: Harness
    var executable = Self.system
    /// Defaults to the harness's (its private bus).
    var environment: [String: String]?

    /// A copy of secret-tool in `folder` with a few bytes appended (an ELF file's tail is not
    /// loaded): another path and another SHA-256, so another application by either.
    static func copy(into folder: URL, name: String = "secret-tool") throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent(name)
        var bytes = try Data(contentsOf: system)
        bytes.append(Data("\ntresor-e2e: another application\n".utf8))
        try bytes.write(to: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy.path)
        return copy
    }

    func running(_ executable: URL) -> SecretTool { SecretTool(harness: harness, executable: executable, environment: environment) }

    func run(_ arguments: [String], input: String? = nil, revealing: [String] = []) throws -> Harness.Result {
        try harness.run(executable, arguments, input: input, environment: environment, timeout: clientTimeout, revealing: revealing)
    }

    private static func flatten(_ attributes: KeyValuePairs<String, String>) -> [String] {
        attributes.flatMap { [$0.key, $0.value] }
    }

    /// `secret-tool store --label=LABEL [--collection=PATH] ATTRIBUTES`, the secret on stdin.
    @discardableResult
    func store(label: String, _ attributes: KeyValuePairs<String, String>, secret: String, collection: String? = nil) throws -> Harness.Result {
        let stored = try run(
            ["store", "--label=\(label)"] + (collection.map { ["--collection=\($0)"] } ?? []) + Self.flatten(attributes), input: secret)
        #expect(stored.succeeded, "secret-tool store failed: \(stored.stderr)")
        return stored
    }

    /// `secret-tool lookup`: the secret, or nil when the provider found none (exit 1, no output)
    /// or refused it because nobody could be asked to approve the read or to unlock (exit 1,
    /// saying so).
    /// `expecting` is kept out of the transcript; anything else it prints stays in it.
    func lookup(_ attributes: KeyValuePairs<String, String>, expecting: String? = nil) throws -> String? {
        let found = try run(["lookup"] + Self.flatten(attributes), revealing: expecting.map { [$0] } ?? [])
        if found.status == 1 && found.stdout.isEmpty {
            #expect(
                found.stderr.isEmpty || found.stderr.contains(SecretService.nobodyToAsk)
                    || found.stderr.contains(SecretService.lockedWithNobodyToAsk),
                "secret-tool lookup failed rather than finding nothing: \(found.stderr)")
            return nil
        }
        #expect(found.succeeded, "secret-tool lookup failed: \(found.stderr)")
        return found.stdout
    }

    /// `secret-tool search --all`: each item's label (stdout) and every attribute line (stderr,
    /// where secret-tool prints them, unordered against stdout). It prints secrets too: `expecting`
    /// names the ones this client may see.
    func search(_ attributes: KeyValuePairs<String, String>, expecting: [String] = []) throws -> SearchResult {
        let found = try run(["search", "--all"] + Self.flatten(attributes), revealing: expecting)
        #expect(found.succeeded, "secret-tool search failed: \(found.stderr)")
        var result = SearchResult()
        for line in found.stdout.split(separator: "\n") {
            if line.hasPrefix("label = ") { result.labels.append(String(line.dropFirst("label = ".count))) }
            if line.hasPrefix("secret = ") { result.secrets.append(String(line.dropFirst("secret = ".count))) }
        }
        for line in found.stderr.split(separator: "\n") where line.hasPrefix("attribute.") {
            let pair = line.dropFirst("attribute.".count).split(separator: " = ", maxSplits: 1)
            if pair.count == 2 { result.attributes.append((String(pair[0]), String(pair[1]))) }
        }
        return result
    }

    struct SearchResult {
        var labels: [String] = []
        var secrets: [String] = []
        var attributes: [(String, String)] = []

        func has(_ key: String, _ value: String) -> Bool { attributes.contains { $0 == (key, value) } }
    }

    /// `secret-tool clear`.
    @discardableResult
    func clear(_ attributes: KeyValuePairs<String, String>) throws -> Harness.Result {
        try run(["clear"] + Self.flatten(attributes))
    }
}

/// git's `git-credential-libsecret`, built once per test run from the source Debian's git ships.
struct GitCredentialHelper {
    static let source = URL(fileURLWithPath: "/usr/share/doc/git/contrib/credential/libsecret/git-credential-libsecret.c")

    /// The compiled helper, in a folder removed when the test process exits.
    private static let compiled: Result<URL, any Error> = Result {
        let folder = Self.folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: GitCredentialHelper.folder) }
        let environment = ProcessInfo.processInfo.environment
        let flags = try Harness.execute(
            URL(fileURLWithPath: "/usr/bin/pkg-config"), ["--cflags", "--libs", "libsecret-1", "glib-2.0"], environment: environment, timeout: 60
        ).result
        guard flags.succeeded else { throw SecretServiceTestError.fixture("pkg-config libsecret-1 glib-2.0 failed: \(flags.stderr)") }
        let binary = folder.appendingPathComponent("git-credential-libsecret")
        let built = try Harness.execute(
            URL(fileURLWithPath: "/usr/bin/gcc"),
            ["-O1", "-o", binary.path, source.path] + flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init),
            environment: environment, timeout: 120
        ).result
        guard built.succeeded else { throw SecretServiceTestError.fixture("gcc could not build git-credential-libsecret: \(built.stderr)") }
        return binary
    }
    private static var folder: URL { FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-git-helper-\(getpid())") }

    let harness: Harness
    let executable: URL

    init(harness: Harness) throws {
        self.harness = harness
        executable = try Self.compiled.get()
    }

    /// One credential-protocol exchange: `operation` with `fields` on stdin, the fields it answers.
    func run(_ operation: String, _ fields: KeyValuePairs<String, String>, revealing: [String] = []) throws -> [String: String] {
        let input = fields.map { "\($0.key)=\($0.value)\n" }.joined() + "\n"
        let answer = try harness.run(executable, [operation], input: input, timeout: clientTimeout, revealing: revealing)
        #expect(answer.succeeded, "git-credential-libsecret \(operation) failed: \(answer.stderr)")
        var result: [String: String] = [:]
        for line in answer.stdout.split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { result[String(pair[0])] = String(pair[1]) }
        }
        return result
    }
}

/// The Python clients in Tests/Fixtures/SecretService, run by Debian's python3 (one application
/// to the daemon, whichever script it runs).
struct PythonClients {
    static let python = URL(fileURLWithPath: "/usr/bin/python3")
    static let fixtures = Repository.file("Tests/Fixtures/SecretService")

    let harness: Harness

    /// python3's arguments to run a fixture script: -B, so that importing key_values.py leaves
    /// no __pycache__ in the source tree.
    private static func command(_ script: String) -> [String] {
        ["-B", fixtures.appendingPathComponent(script).path]
    }

    private func script(
        _ name: String, _ arguments: [String], input: String? = nil, revealing: [String] = [], timeout: TimeInterval = clientTimeout
    ) throws -> Harness.Result {
        try harness.run(Self.python, Self.command(name) + arguments, input: input, timeout: timeout, revealing: revealing)
    }

    /// keyring_client.py: `set` (the password on stdin), `get` (exit 1: none), `delete` (exit 1: none).
    func keyring(_ command: String, service: String, user: String, password: String? = nil, expecting: String? = nil) throws -> Harness.Result {
        try script("keyring_client.py", [command, service, user], input: password, revealing: expecting.map { [$0] } ?? [])
    }

    enum Session: String {
        case dh, plain
    }

    /// secretstorage_client.py with the session algorithm `session` forced.
    func secretstorage(
        _ session: Session, _ command: String, _ arguments: [String], secret: String? = nil, collection: String? = nil, expecting: String? = nil
    ) throws -> Harness.Result {
        let result = try script(
            "secretstorage_client.py", ["--session", session.rawValue] + (collection.map { ["--collection", $0] } ?? []) + [command] + arguments,
            input: secret, revealing: expecting.map { [$0] } ?? [])
        let opened = session == .dh ? "session: dh-ietf1024-sha256-aes128-cbc-pkcs7 encrypted" : "session: plain plain"
        #expect(result.stderr.contains(opened), "secretstorage did not open the \(session) session: \(result.stderr)")
        return result
    }

    /// Items found by secretstorage_client.py `search`.
    func secretstorageSearch(_ session: Session, _ attributes: [String]) throws -> [StorageItem] {
        let found = try secretstorage(session, "search", attributes)
        #expect(found.succeeded, "secretstorage search failed: \(found.stderr)")
        return try JSONDecoder().decode([StorageItem].self, from: Data(found.stdout.utf8))
    }

    struct StorageItem: Decodable {
        var path: String
        var label: String
        var attributes: [String: String]
        var locked: Bool
    }

    /// raw_dbus.py COMMAND, its JSON answer decoded. `timeout` bounds each of its calls; the
    /// process gets a few times that.
    func raw<Answer: Decodable>(
        _ type: Answer.Type, _ command: String, _ arguments: [String] = [], timeout: TimeInterval = 20, asLibsecretClient: Bool = false
    ) throws -> Answer {
        let flags = ["--timeout", "\(Int(timeout))"] + (asLibsecretClient ? ["--as-libsecret-client"] : [])
        let answer = try script("raw_dbus.py", flags + [command] + arguments, timeout: clientTimeout + 3 * timeout)
        guard answer.succeeded, let line = answer.stdout.split(separator: "\n").last else {
            throw SecretServiceTestError.fixture("raw_dbus.py \(command) failed (\(answer.status)): \(answer.stderr.suffix(3000))")
        }
        return try JSONDecoder().decode(Answer.self, from: Data(line.utf8))
    }

    /// raw_dbus.py COMMAND left running: for a prompt that completes only once the test has done
    /// something (`tresor unlock`).
    func startRaw(_ command: String, _ arguments: [String] = [], timeout: TimeInterval = 20) throws -> BackgroundProcess {
        try BackgroundProcess(
            harness: harness, executable: Self.python,
            arguments: Self.command("raw_dbus.py") + ["--timeout", "\(Int(timeout))", command] + arguments)
    }
}

/// A client that runs while the test does something else, read a line at a time. Killed at
/// deinit if still running; its output goes into the transcript when it is finished.
final class BackgroundProcess {
    private let harness: Harness
    private let process: Process
    private let executable: URL
    private let arguments: [String]
    private let stdout: Pipe
    private let stderr: PipeDrain
    private let stderrPipe: Pipe
    private var lines: [String] = []
    private var recorded = false

    /// - Parameter input: its standard input, written and closed at once (a secret for
    ///   `secret-tool store`); nothing when nil.
    init(harness: Harness, executable: URL, arguments: [String], input: String? = nil) throws {
        self.harness = harness
        self.executable = executable
        self.arguments = arguments
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = harness.environment
        stdout = Pipe()
        stderrPipe = Pipe()
        process.standardOutput = stdout
        process.standardError = stderrPipe
        let stdin = input.map { _ in Pipe() }
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
        if let stdin, let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        stderr = PipeDrain(stderrPipe.fileHandleForReading.fileDescriptor)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
        }
        record()
    }

    /// The next line it prints, waiting at most `timeout` seconds; nil when it exited without one.
    func nextLine(timeout: TimeInterval = clientTimeout) throws -> String? {
        let line = try PrivateBus.readLine(stdout.fileHandleForReading.fileDescriptor, timeout: timeout)
        if let line { lines.append(line) }
        return line
    }

    /// Waits for it to exit (throws when it has not, `timeout` seconds after its last line: deinit
    /// then kills it) and returns what it printed from here on.
    func finish(timeout: TimeInterval = clientTimeout) throws -> Harness.Result {
        var rest: [String] = []
        while let line = try PrivateBus.readLine(stdout.fileHandleForReading.fileDescriptor, timeout: timeout) {
            rest.append(line)
        }
        lines += rest
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            throw HarnessError.timedOut("\(executable.lastPathComponent) \(arguments.joined(separator: " "))", after: timeout)
        }
        process.waitUntilEnded()
        record()
        return Harness.Result(status: process.terminationStatus, stdout: rest.joined(separator: "\n"), stderr: errors)
    }

    /// Kills it (SIGKILL: its connection to the bus closes as in a crash) and waits for its end.
    func killWithoutWarning() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilEnded()
        record()
    }

    /// Its standard error, read once it has exited (a PipeDrain gives its data once).
    private lazy var errors = String(decoding: stderr.data(), as: UTF8.self)

    /// Once, after it has exited.
    private func record() {
        if !recorded && !process.isRunning {
            recorded = true
            harness.record(executable, arguments + ["[in the background]"], output: lines.joined(separator: "\n") + "\n" + errors)
        }
    }
}
