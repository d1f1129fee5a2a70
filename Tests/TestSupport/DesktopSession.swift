import Foundation
import TresorDBus

#if canImport(Glibc)
import Glibc
#endif

/// A desktop for one test (used by the prompter's tests and the Secret Service's end-to-end
/// tests): a display without a screen (`Xvfb :N`), a private session bus with
/// no service folders (unless asked: then only the prompter's), and Debian's own
/// `/usr/libexec/gcr-prompter` on both. Everything it started goes at deinit.
public final class DesktopSession {
    public static let prompterPath = "/usr/libexec/gcr-prompter"
    public static var canRun: Bool {
        ["/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/import", "/usr/bin/dbus-daemon", prompterPath]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }
    /// Screenshots go here (`.build/desktop-prompt-artifacts`, or `TRESOR_DESKTOP_PROMPT_ARTIFACTS`).
    public static let artifacts: URL = {
        let environment = ProcessInfo.processInfo.environment["TRESOR_DESKTOP_PROMPT_ARTIFACTS"]
        let folder =
            environment.map { URL(fileURLWithPath: $0) }
            ?? Repository.file(".build/desktop-prompt-artifacts")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    public let display: String
    public let busAddress: String
    public let folder: URL
    private var processes: [Process] = []

    /// - Parameter prompterStarted: start gcr-prompter now (else it is only activatable, when
    ///   `activatable`, or absent).
    public init(prompterStarted: Bool = true, activatable: Bool = false) throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tresor-desktop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        display = try Self.freeDisplay()
        busAddress = "unix:path=\(folder.path)/bus"
        let xvfb = try start("/usr/bin/Xvfb", [display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        _ = xvfb
        try waitUntil("Xvfb's socket") { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(self.display.dropFirst())") }
        var services = ""
        if activatable {
            let serviceFolder = folder.appendingPathComponent("services")
            try FileManager.default.createDirectory(at: serviceFolder, withIntermediateDirectories: true)
            try "[D-BUS Service]\nName=org.gnome.keyring.SystemPrompter\nExec=\(Self.prompterPath)\n"
                .write(to: serviceFolder.appendingPathComponent("org.gnome.keyring.SystemPrompter.service"), atomically: true, encoding: .utf8)
            services = "<servicedir>\(serviceFolder.path)</servicedir>"
        }
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig><type>session</type><keep_umask/><listen>\(busAddress)</listen><auth>EXTERNAL</auth>\(services)
        <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
        </busconfig>
        """.write(to: folder.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        // The bus hands its environment to what it activates: the display, the bus.
        // Through Python, to start it with no signal blocked: a test thread's mask is inherited,
        // and a bus that never sees SIGCHLD never notices an activated service that exited.
        try start(
            "/usr/bin/python3",
            [
                "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                "/usr/bin/dbus-daemon", "--config-file=\(folder.path)/bus.conf", "--nofork", "--nopidfile",
            ])
        // The socket's file shows before the bus listens on it: wait until it answers.
        try waitUntil("the bus") { (try? DBusConnection(address: self.busAddress)) != nil }
        if prompterStarted {
            try startPrompter()
        }
    }

    deinit {
        for process in processes.reversed() where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
        }
        try? FileManager.default.removeItem(at: folder)
        // Killed, Xvfb leaves its display's lock and socket: left there, the display numbers run out.
        for file in Self.displayFiles(display) { try? FileManager.default.removeItem(atPath: file) }
    }

    /// What every process on this desktop has in its environment.
    public var environment: [String: String] {
        [
            "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": folder.path, "XDG_RUNTIME_DIR": folder.path,
            "PATH": "/usr/bin:/bin", "NO_AT_BRIDGE": "1", "GDK_BACKEND": "x11", "LANG": "C.UTF-8",
        ]
    }

    /// Starts gcr's prompter and waits until it owns its name.
    public func startPrompter() throws {
        try start(Self.prompterPath, [])
        try waitUntilOwned()
    }

    /// Waits until someone owns `org.gnome.keyring.SystemPrompter`.
    public func waitUntilOwned() throws {
        let connection = try DBusConnection(address: busAddress)
        try waitUntil("the prompter's bus name") {
            (try? connection.callBus("NameHasOwner", [.string("org.gnome.keyring.SystemPrompter")]))?.first == .boolean(true)
        }
    }

    @discardableResult
    public func start(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment.merging(extra) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.append(process)
        return process
    }

    /// Runs an X client on this display (xdotool, import) to its end; its standard output.
    @discardableResult
    public func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilEnded()
        return String(decoding: data, as: UTF8.self)
    }

    /// Waits (up to 20 s) until a visible window named `title` shows, and gives it the keyboard.
    public func waitForWindow(_ title: String) throws {
        try waitUntil("a window named \(title)") {
            !((try? self.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title])) ?? "").isEmpty
        }
        // No window manager gives it the keyboard: X's own focus does.
        _ = try? run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title, "windowfocus"])
        // GTK draws a moment after mapping; a key sent before would be lost.
        usleep(300_000)
    }

    public func xdotool(_ arguments: String...) throws {
        try run("/usr/bin/xdotool", arguments)
    }

    /// A PNG of the whole screen, into the artifacts folder.
    public func screenshot(_ name: String) throws -> URL {
        let file = Self.artifacts.appendingPathComponent("\(name).png")
        try? FileManager.default.removeItem(at: file)
        try run("/usr/bin/import", ["-display", display, "-window", "root", file.path])
        return file
    }

    /// A display's lock file and socket.
    private static func displayFiles(_ display: String) -> [String] {
        let number = display.dropFirst()
        return ["/tmp/.X\(number)-lock", "/tmp/.X11-unix/X\(number)"]
    }

    /// A display number nobody uses: no lock file and no socket, or a lock file whose X server
    /// is gone (a run that was killed), whose files are then removed.
    private static func freeDisplay() throws -> String {
        for _ in 0..<200 {
            let display = ":\(Int.random(in: 100...899))"
            let files = displayFiles(display)
            if !files.contains(where: FileManager.default.fileExists(atPath:)) { return display }
            let owner = (try? String(contentsOfFile: files[0], encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if let owner, owner > 0, kill(owner, 0) == -1, errno == ESRCH {
                for file in files { try? FileManager.default.removeItem(atPath: file) }
                return display
            }
        }
        throw DesktopError.timedOut("a free display number")
    }

    public enum DesktopError: Error { case timedOut(String) }
}
