import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A local user made for one test (`useradd` + `chpasswd`, removed after), with the PAM service
/// `/etc/pam.d/tresor-test` naming the module built from `Support/pam` (Debian's `pam_unix`
/// first, as on a real system), and its own Tresor home under its home folder. Everything that
/// is the user's runs as the user, through `setpriv`; `pamtester` runs as root, as `login` does.
final class PAMUser {
    /// Root (CI runs as root), Debian's pamtester and the PAM headers the module builds against.
    static var available: Bool {
        getuid() == 0
            && ["/usr/bin/pamtester", "/usr/bin/setpriv", "/usr/sbin/useradd", "/usr/bin/make"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: $0)
            } && FileManager.default.fileExists(atPath: "/usr/include/security/pam_modules.h")
    }

    static let service = "tresor-test"
    static let repository = Repository.root

    let name: String
    let uid: uid_t
    let gid: gid_t
    /// 0755, under /var/tmp: the user reaches the binaries copied here.
    let root: URL
    let home: URL
    /// `tresor` and `tresord`, copied where the user may run them.
    let binaries: URL
    /// What logind would make: /run/user/UID, the user's, 0700.
    let runtime: URL
    let module: URL
    /// Secrets the test used: none may appear in any output or in the daemon's log.
    var secrets: [String] = []
    private(set) var transcript = ""

    /// Makes the user with `password`, builds the module (make: up to date after scripts/test)
    /// and writes the service file with it.
    init(password: String) throws {
        name = "tresorpam\(UUID().uuidString.prefix(6).lowercased())"
        root = URL(fileURLWithPath: "/var/tmp/tresor-pam-\(name)")
        home = root.appendingPathComponent("home")
        binaries = root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: binaries, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        chmod(root.path, 0o755)
        for program in ["tresor", "tresord"] {
            try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent(program), to: binaries.appendingPathComponent(program))
        }
        let built = Self.repository.appendingPathComponent(".build/pam")
        try Self.check(Self.execute("/usr/bin/make", ["-s", "-C", Self.repository.appendingPathComponent("Support/pam").path, "OUT=\(built.path)"]))
        module = built.appendingPathComponent("pam_tresor.so")

        try Self.check(Self.execute("/usr/sbin/useradd", ["-m", "-d", home.path, "-s", "/bin/sh", name]))
        try Self.check(Self.execute("/usr/sbin/chpasswd", [], input: "\(name):\(password)\n"))
        secrets.append(password)
        let account = name
        let ids = try ["-u", "-g"].map { try Self.check(Self.execute("/usr/bin/id", [$0, account])).stdout }.joined(separator: " ")
        let numbers = ids.split(whereSeparator: \.isWhitespace).compactMap { UInt32($0) }
        guard numbers.count == 2 else { throw PAMUserError.failed("id \(name): \(ids)") }
        (uid, gid) = (numbers[0], numbers[1])
        runtime = URL(fileURLWithPath: "/run/user/\(uid)")
        try FileManager.default.createDirectory(atPath: "/run/user", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        // A run that was killed may have left this uid's folder behind: the uid is this user's now.
        try? FileManager.default.removeItem(at: runtime)
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        chown(runtime.path, uid, gid)
        try writeService()
    }

    deinit {
        stopDaemon()
        _ = try? Self.execute("/usr/sbin/userdel", ["-r", name])
        try? FileManager.default.removeItem(atPath: "/etc/pam.d/\(Self.service)")
        try? FileManager.default.removeItem(at: runtime)
        try? FileManager.default.removeItem(at: root)
    }

    /// The service file: pam_unix decides (requisite, so a failure ends the stack before the
    /// module, as Debian's common-auth and common-password do), the module follows, optional.
    /// - Parameters:
    ///   - module: the module's path (a missing one, to show its absence fails nothing).
    ///   - options: the module's options after `tresor=`.
    func writeService(module: String? = nil, tresor: String? = nil, options: String = "") throws {
        let line = "\(module ?? self.module.path) tresor=\(tresor ?? binaries.appendingPathComponent("tresor").path) \(options)"
        let text = """
            auth requisite pam_unix.so
            auth optional \(line)
            account required pam_unix.so
            session required pam_unix.so
            session optional \(line)
            password requisite pam_unix.so
            password optional \(line)

            """
        try text.write(toFile: "/etc/pam.d/\(Self.service)", atomically: true, encoding: .utf8)
    }

    /// `pamtester tresor-test USER OPERATIONS…` as root, the passwords on standard input.
    @discardableResult
    func pamtester(_ operations: [String], input: String, timeout: TimeInterval = 60) throws -> Harness.Result {
        try run("/usr/bin/pamtester", [Self.service, name] + operations, input: input, timeout: timeout)
    }

    /// What a screensaver does: `pam_authenticate` then `pam_setcred`, no session, as the user.
    @discardableResult
    func screensaverUnlock(password: String) throws -> Harness.Result {
        try run("/usr/bin/setpriv", asUser + [try pamClient().path, "screensaver", Self.service, name], input: password + "\n", timeout: 60)
    }

    /// What login and sshd do: authenticate, establish the credentials, then open the session. As root.
    @discardableResult
    func login(password: String) throws -> Harness.Result {
        try run(try pamClient().path, ["login", Self.service, name], input: password + "\n", timeout: 60)
    }

    /// What sudo does: this user authenticates with `password`, then the session is `target`'s. As root.
    @discardableResult
    func sudo(to target: PAMUser, password: String) throws -> Harness.Result {
        try run(try pamClient().path, ["sudo", Self.service, name, target.name], input: password + "\n", timeout: 60)
    }

    /// Tests/Fixtures/PAM/pam-client.c, built here.
    private func pamClient() throws -> URL {
        let program = root.appendingPathComponent("pam-client")
        if !FileManager.default.fileExists(atPath: program.path) {
            let source = Self.repository.appendingPathComponent("Tests/Fixtures/PAM/pam-client.c")
            try Self.check(Self.execute("/usr/bin/cc", ["-o", program.path, source.path, "-lpam"]))
        }
        return program
    }

    /// `tresor ARGUMENTS…` as the user, in the user's environment.
    @discardableResult
    func tresor(_ arguments: [String], input: String? = nil) throws -> Harness.Result {
        try run("/usr/bin/setpriv", asUser + [binaries.appendingPathComponent("tresor").path] + arguments, input: input, timeout: 60)
    }

    /// `tresor status --json` as the user (starting the daemon when none runs, as the CLI does).
    func status() throws -> DaemonStatus {
        let result = try tresor(["status", "--json"])
        return try CLIJSON.decode(DaemonStatus.self, from: Data(result.stdout.utf8))
    }

    /// The user's running daemon, if one answers (without starting one).
    var daemonPID: Int32? {
        guard let socket = try? socketAnswers(), socket else { return nil }
        return try? status().pid
    }

    /// Stops the user's daemon, by the pid it reports, and waits for the process to end (the
    /// socket goes first; `userdel` refuses a user whose process still runs).
    func stopDaemon() {
        guard let pid = daemonPID else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(10)
        while Self.runs(pid), Date() < deadline { usleep(50_000) }
        if Self.runs(pid) {
            kill(pid, SIGKILL)
            while Self.runs(pid) { usleep(50_000) }
        }
    }

    /// Whether process `pid` runs (a zombie does not: it only waits to be reaped).
    private static func runs(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return !stat[stat.index(after: end)...].hasPrefix(" Z")
    }

    /// The daemon's log and the transcript: no secret of the test may be in either.
    func expectNoSecretLeaked(sourceLocation: SourceLocation = #_sourceLocation) {
        let log = (try? String(contentsOfFile: home.appendingPathComponent(".local/share/tresor/logs/tresord.log").path, encoding: .utf8)) ?? ""
        for secret in secrets {
            #expect(!log.contains(secret), "a secret in the daemon's log", sourceLocation: sourceLocation)
            #expect(!transcript.contains(secret), "a secret in a command's output", sourceLocation: sourceLocation)
        }
    }

    // MARK: Running things

    private var asUser: [String] { ["--reuid=\(uid)", "--regid=\(gid)", "--init-groups"] }

    /// The user's environment, as a login would make it (pamtester as root gets it too: it passes
    /// none of it to the module, which makes its own).
    private var userEnvironment: [String: String] {
        [
            "HOME": home.path, "USER": name, "LOGNAME": name, "XDG_RUNTIME_DIR": runtime.path, "PATH": "/usr/bin:/bin",
            "SWIFT_BACKTRACE": "enable=no",
        ]
    }

    private func socketAnswers() throws -> Bool {
        let socket = runtime.appendingPathComponent("tresor/tresord.sock").path
        guard FileManager.default.fileExists(atPath: socket) else { return false }
        return try run(
            "/usr/bin/setpriv", asUser + ["/usr/bin/curl", "-sf", "--max-time", "5", "--unix-socket", socket, "http://tresord/v1/status"],
            timeout: 20
        ).succeeded
    }

    private func run(_ program: String, _ arguments: [String], input: String? = nil, timeout: TimeInterval) throws -> Harness.Result {
        let (result, timedOut) = try Harness.execute(
            URL(fileURLWithPath: program), arguments, input: input, environment: userEnvironment, timeout: timeout)
        transcript += "$ \(program) \(arguments.joined(separator: " "))\n\(result.stdout)\(result.stderr)"
        if timedOut { throw HarnessError.timedOut("\(program) \(arguments.joined(separator: " "))", after: timeout) }
        return result
    }

    private static func execute(_ program: String, _ arguments: [String], input: String? = nil) throws -> Harness.Result {
        let environment = ProcessInfo.processInfo.environment
        return try Harness.execute(URL(fileURLWithPath: program), arguments, input: input, environment: environment, timeout: 120).result
    }

    @discardableResult
    private static func check(_ result: Harness.Result) throws -> Harness.Result {
        guard result.succeeded else { throw PAMUserError.failed(result.stderr + result.stdout) }
        return result
    }
}

enum PAMUserError: Error {
    case failed(String)
}
