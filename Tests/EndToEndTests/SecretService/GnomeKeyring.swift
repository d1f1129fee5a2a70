import Foundation
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real gnome-keyring on a private bus, the source of `tresor import secret-service`:
/// `gnome-keyring-daemon --foreground --unlock --components=secrets` with a home and XDG folders
/// of its own, its login keyring's password on standard input (it creates the keyring and
/// makes it the default). Stopped, and its folders removed, at deinit.
final class GnomeKeyring {
    static let executable = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")

    let folder: URL
    /// The bus's address and this keyring's own HOME and XDG folders: for clients that should
    /// reach it as its user would (`secret-tool` stores and looks up with these).
    let environment: [String: String]
    private let bus: PrivateBus
    private let process: Process
    private let log: URL

    init(bus: PrivateBus, password: String) throws {
        self.bus = bus
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-gnome-keyring-\(UUID().uuidString.prefix(8))")
        var environment = ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }
        for (variable, name) in [
            ("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "run"),
        ] {
            let path = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[variable] = path.path
        }
        self.environment = environment
        log = folder.appendingPathComponent("gnome-keyring.log")
        try Data().write(to: log)
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--foreground", "--unlock", "--components=secrets"]
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        self.process = process
        // --unlock reads the password to its end.
        input.fileHandleForWriting.write(Data(password.utf8))
        try input.fileHandleForWriting.close()
        try bus.waitFor(SecretService.busName, by: "gnome-keyring-daemon", running: { process.isRunning }, log: { [log] in Self.read(log) })
    }

    deinit { stop() }

    /// Stops the daemon and waits until the bus has released its name. SIGKILL: a child of the
    /// test runner inherits a signal mask that blocks SIGTERM, and gnome-keyring has written its
    /// keyring file at every change.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
            try? bus.waitFor(SecretService.busName, owned: false, by: "gnome-keyring-daemon")
        }
        try? FileManager.default.removeItem(at: folder)
    }

    var isRunning: Bool { process.isRunning }

    /// Locks its login collection (`org.freedesktop.Secret.Service.Lock`; `secret-tool lock`
    /// hangs here). Unlocking it again would take a prompt.
    func lockLogin() throws {
        let (locked, timedOut) = try Harness.execute(
            PrivateBus.dbusSend,
            [
                "--session", "--print-reply", "--dest=\(SecretService.busName)", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ],
            environment: environment, timeout: 30)
        guard !timedOut, locked.succeeded else { throw SecretServiceTestError.fixture("Lock failed: \(locked.stderr)") }
    }

    private static func read(_ log: URL) -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
}
