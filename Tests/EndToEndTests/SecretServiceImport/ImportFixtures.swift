import Foundation
import TresorSystem

// The import tests' world: a session bus of their own, the real gnome-keyring on it as the
// provider to import from, and Debian's secret-tool as its user's client.

enum ImportTools {
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    static let dbusSend = "/usr/bin/dbus-send"
    static let gnomeKeyring = "/usr/bin/gnome-keyring-daemon"
    static let secretTool = "/usr/bin/secret-tool"
    static let busName = "org.freedesktop.secrets"

    /// Without them the tests are disabled, not silently passed.
    static let installed = [dbusDaemon, dbusSend, gnomeKeyring, secretTool].allSatisfy { FileManager.default.fileExists(atPath: $0) }

    /// Runs a tool to its end, at most `timeout` seconds (then it is killed), recording nothing:
    /// for commands that print a secret on purpose (a lookup), which must stay out of the
    /// harness's transcript, whose scan looks for secrets.
    static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String], timeout: TimeInterval = 30
    ) throws -> Harness.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let stdout = Pipe(), stderr = Pipe(), stdin = Pipe()
        (process.standardOutput, process.standardError, process.standardInput) = (stdout, stderr, stdin)
        try process.run()
        let pid = process.processIdentifier
        let deadline = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: deadline)
        let out = PipeDrain(stdout.fileHandleForReading.fileDescriptor), err = PipeDrain(stderr.fileHandleForReading.fileDescriptor)
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let result = Harness.Result(
            status: 0, stdout: String(decoding: out.data(), as: UTF8.self), stderr: String(decoding: err.data(), as: UTF8.self))
        process.waitUntilExit()
        deadline.cancel()
        return Harness.Result(status: process.terminationStatus, stdout: result.stdout, stderr: result.stderr)
    }
}

/// A private session bus: `dbus-daemon` with no `<servicedir>`, so nothing is activated on it and
/// only the provider a test starts can own `org.freedesktop.secrets`. Killed at deinit.
final class ImportTestBus {
    let address: String
    private let folder: URL
    private let process: Process

    /// What every process on this bus needs in its environment.
    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-import-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let configuration = folder.appendingPathComponent("bus.conf")
        try Data("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><keep_umask/><listen>unix:dir=\(folder.path)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """.utf8).write(to: configuration)
        process = Process()
        process.executableURL = URL(fileURLWithPath: ImportTools.dbusDaemon)
        process.arguments = ["--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // It prints its address, then keeps standard output open while it runs.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += chunk
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard address.hasPrefix("unix:") else {
            kill(process.processIdentifier, SIGKILL)
            throw ImportFixtureError("dbus-daemon printed no address")
        }
    }

    deinit {
        // SIGKILL: a process started from a test thread inherits a mask that blocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Whether a connection owns `name` (`org.freedesktop.DBus.NameHasOwner`).
    func hasOwner(_ name: String) throws -> Bool {
        let answer = try ImportTools.run(
            ImportTools.dbusSend,
            ["--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:\(name)"],
            environment: ProcessInfo.processInfo.environment)
        guard answer.succeeded else { throw ImportFixtureError("NameHasOwner failed: \(answer.stderr)") }
        return answer.stdout.contains("boolean true")
    }

    /// Waits until `name` is owned (or, with `owned: false`, released) — a fixture's readiness,
    /// bounded so that a provider that never comes fails the test instead of hanging it.
    func waitFor(_ name: String, owned: Bool = true, by who: String, running: () -> Bool = { true }) throws {
        let deadline = Date().addingTimeInterval(30)
        while try hasOwner(name) != owned {
            guard !owned || running() else { throw ImportFixtureError("\(who) exited before it owned \(name)") }
            guard Date() < deadline else { throw ImportFixtureError("\(name) still \(owned ? "unowned" : "owned") 30 s after \(who) \(owned ? "started" : "stopped")") }
            usleep(50_000)
        }
    }
}

/// The real gnome-keyring on a bus, its login keyring created and unlocked with `password`
/// (read on standard input), with a home and XDG folders of its own. Killed at deinit.
final class ImportSourceKeyring {
    /// The bus and this keyring's HOME and XDG folders: what secret-tool runs with to reach it.
    let environment: [String: String]
    private let bus: ImportTestBus
    private let folder: URL
    private let process: Process

    init(bus: ImportTestBus, password: String) throws {
        self.bus = bus
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-e2e-import-keyring-\(UUID().uuidString.prefix(8))")
        var environment = ProcessInfo.processInfo.environment.merging(bus.environment) { $1 }
        for (variable, name) in [("HOME", "home"), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "run")] {
            let path = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[variable] = path.path
        }
        self.environment = environment
        process = Process()
        process.executableURL = URL(fileURLWithPath: ImportTools.gnomeKeyring)
        process.arguments = ["--foreground", "--unlock", "--components=secrets"]
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // --unlock reads the password to the end of its input.
        input.fileHandleForWriting.write(Data(password.utf8))
        try input.fileHandleForWriting.close()
        try bus.waitFor(ImportTools.busName, by: "gnome-keyring-daemon", running: { [process] in process.isRunning })
    }

    deinit { stop() }

    /// Kills it and waits until the bus has released the name.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? bus.waitFor(ImportTools.busName, owned: false, by: "gnome-keyring-daemon")
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Locks its login collection (`org.freedesktop.Secret.Service.Lock`; `secret-tool lock`
    /// hangs here). Unlocking it again would take a prompt.
    func lockLogin() throws {
        let locked = try ImportTools.run(
            ImportTools.dbusSend,
            ["--session", "--print-reply", "--dest=\(ImportTools.busName)", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
             "array:objpath:/org/freedesktop/secrets/collection/login"],
            environment: environment)
        guard locked.succeeded else { throw ImportFixtureError("Lock failed: \(locked.stderr)") }
    }
}

/// `secret-tool` as a user runs it, against whichever provider owns the name on the bus of
/// `environment`. Nothing it prints is recorded (a lookup prints the secret).
struct SecretToolClient {
    let environment: [String: String]

    /// `secret-tool store --label=LABEL ATTRIBUTE VALUE…`, the secret on standard input.
    func store(label: String, _ attributes: [(String, String)], secret: String) throws {
        let stored = try ImportTools.run(
            ImportTools.secretTool, ["store", "--label=\(label)"] + attributes.flatMap { [$0.0, $0.1] }, input: secret, environment: environment)
        guard stored.succeeded else { throw ImportFixtureError("secret-tool store failed: \(stored.stderr)") }
    }

    /// `secret-tool lookup ATTRIBUTE VALUE…`: the secret, or nil when none matches.
    func lookup(_ attributes: [(String, String)]) throws -> String? {
        let found = try ImportTools.run(ImportTools.secretTool, ["lookup"] + attributes.flatMap { [$0.0, $0.1] }, environment: environment)
        return found.succeeded ? found.stdout : nil
    }

    /// How many items `secret-tool search --all ATTRIBUTE VALUE…` lists.
    func count(_ attributes: [(String, String)]) throws -> Int {
        let found = try ImportTools.run(ImportTools.secretTool, ["search", "--all"] + attributes.flatMap { [$0.0, $0.1] }, environment: environment)
        return (found.stdout + found.stderr).components(separatedBy: "\nlabel = ").count - 1
    }
}

struct ImportFixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
