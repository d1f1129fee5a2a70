import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A D-Bus session bus of the test's own: `dbus-daemon` with a configuration whose only
/// `<servicedir>` holds the services the test gives (none by default), so nothing else is ever
/// activated on it and the only provider of `org.freedesktop.secrets` is the one the test starts
/// or lets the bus start. Its socket lives in a folder of its own; the daemon, anything it
/// started, and the folder go at deinit.
public final class PrivateBus {
    /// For `DBUS_SESSION_BUS_ADDRESS`.
    public let address: String
    public let folder: URL
    /// The user the bus runs as, when not the test runner's (a session bus admits its own uid only).
    public let user: TestUser?
    private let daemon: Process

    public static let dbusDaemon = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    public static let dbusSend = URL(fileURLWithPath: "/usr/bin/dbus-send")

    /// What every process that should use this bus needs in its environment.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// - Parameters:
    ///   - user: the user to run the bus as.
    ///   - services: D-Bus services the bus may start, by name: the `Exec=` line of each (a
    ///     `.service` file in the bus's own service folder).
    public init(user: TestUser? = nil, services: [String: String] = [:]) throws {
        self.user = user
        folder = URL(fileURLWithPath: user == nil ? FileManager.default.temporaryDirectory.path : "/var/tmp")
            .appendingPathComponent("tresor-e2e-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let configuration = folder.appendingPathComponent("bus.conf")
        let serviceFolder = folder.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: serviceFolder, withIntermediateDirectories: true)
        for (name, exec) in services {
            try Data("[D-BUS Service]\nName=\(name)\nExec=\(exec)\n".utf8).write(to: serviceFolder.appendingPathComponent("\(name).service"))
        }
        try Data(
            """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <listen>unix:dir=\(folder.path)</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(serviceFolder.path)</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.utf8
        ).write(to: configuration)
        try user?.own(folder)
        let process = Process()
        let arguments = ["--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address=1"]
        (process.executableURL, process.arguments) = user?.wrapping(Self.dbusDaemon, arguments) ?? (Self.dbusDaemon, arguments)
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        daemon = process
        // It prints its address, then keeps stdout open for as long as it runs.
        let line = try Self.readLine(stdout.fileHandleForReading.fileDescriptor, timeout: 15)
        guard let line, line.hasPrefix("unix:") else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
            throw TestProcess.Failure("dbus-daemon printed no address within 15 s (got \(line.debugDescription))")
        }
        address = line
    }

    deinit {
        // Anything the bus started (its services) is the daemon's child.
        for child in Self.children(of: daemon.processIdentifier) { kill(child, SIGKILL) }
        // SIGKILL: a child of the test runner inherits a signal mask that blocks SIGTERM, and
        // dbus-daemon has nothing to save.
        if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
        daemon.waitUntilEnded()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Whether some connection owns `name` now (`org.freedesktop.DBus.NameHasOwner`).
    public func hasOwner(_ name: String) throws -> Bool {
        let arguments = [
            "--bus=\(address)", "--print-reply", "--reply-timeout=5000", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner", "string:\(name)",
        ]
        let (program, programArguments) = user?.wrapping(Self.dbusSend, arguments) ?? (Self.dbusSend, arguments)
        let (answer, timedOut) = try TestProcess.run(program, programArguments, timeout: 10)
        guard !timedOut, answer.succeeded else {
            throw TestProcess.Failure("NameHasOwner(\(name)) failed on the private bus: \(answer.stderr)")
        }
        return answer.stdout.contains("boolean true")
    }

    /// Polls until `name` is owned (or, with `owned: false`, released), at most `timeout`
    /// seconds, and fails at once when `running` says the process meant to own it has exited.
    public func waitFor(
        _ name: String, owned: Bool = true, by provider: String, timeout: TimeInterval = 20,
        running: () -> Bool = { true }, log: () -> String = { "" }
    ) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try hasOwner(name) != owned {
            guard !owned || running() else {
                throw TestProcess.Failure("\(provider) exited before it owned \(name); its log:\n\(log().suffix(4000))")
            }
            guard Date() < deadline else {
                throw TestProcess.Failure(
                    "\(name) was still \(owned ? "unowned" : "owned") \(Int(timeout)) s after \(provider) \(owned ? "started" : "stopped"); its log:\n\(log().suffix(4000))"
                )
            }
            usleep(50_000)
        }
    }

    /// One line from `fd` (without its newline), or nil at end of file; waits at most `timeout`
    /// seconds in all and throws past that.
    public static func readLine(_ fd: Int32, timeout: TimeInterval) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var line = Data()
        var byte: UInt8 = 0
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            let ready = poll(&poller, 1, left)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else {
                throw TestProcess.Failure(
                    "no complete line within \(Int(timeout)) s (read so far: \(String(decoding: line, as: UTF8.self).debugDescription))")
            }
            let count = read(fd, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1 else { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// The pids whose parent is `pid`, from /proc.
    public static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let afterName = stat.range(of: ") ", options: .backwards)
            else { return nil }
            // "pid (comm) state ppid …": the name may hold spaces and parentheses, so read after its last ")".
            let fields = stat[afterName.upperBound...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }
}
