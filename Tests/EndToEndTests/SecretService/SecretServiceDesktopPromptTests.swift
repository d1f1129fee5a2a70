import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A program waiting on a locked keybag is answered through the desktop's own prompter: Debian's
/// `gcr-prompter` on a display without a screen (Xvfb), the passcode typed with `xdotool`
/// (docs/SECRET-SERVICE.md, "Asking on the desktop").
@Suite(
    .serialized,
    .enabled(if: SecretService.toolsInstalled && PromptDesktop.canRun, "needs Xvfb, xdotool, ImageMagick's import and gcr-prompter (scripts/test installs them)")
)
struct SecretServiceDesktopPromptTests {
    /// tresord on the desktop's bus, with an item of secret-tool's, the keybag locked.
    func lockedProvider(_ desktop: PromptDesktop) throws -> (Harness, passcode: String, secret: String) {
        let harness = try Harness(environment: ["DBUS_SESSION_BUS_ADDRESS": desktop.busAddress])
        let passcode = "e2e-desktop-passcode-\(UUID().uuidString.prefix(6))"
        harness.secrets = [passcode]
        try harness.startDaemon(extraArguments: ["--secret-service"])
        try desktop.waitUntil("tresord to own org.freedesktop.secrets") { desktop.owned("org.freedesktop.secrets") }
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let secret = "e2e-desktop-secret-\(UUID().uuidString.prefix(6))"
        let tool = SecretTool(harness: harness)
        try tool.store(label: "E2E desktop", ["tresor-e2e": "desktop"], secret: secret)
        #expect(try harness.tresor(["lock"]).succeeded)
        return (harness, passcode, secret)
    }

    @Test func theDesktopsPrompterUnlocksForAWaitingSecretToolLookup() throws {
        let desktop = try PromptDesktop()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        // secret-tool lookup on a locked keybag: it calls Unlock, then Prompt, and waits.
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        let screenshot = try desktop.screenshot("secret-service-unlock-prompt")
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        let result = try lookup.finish(timeout: 30)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout == secret)
        #expect(try harness.status().keybag == .unlocked)
        #expect(harness.daemonLog.contains("the passcode was given in the desktop's prompter"))
        try harness.expectNoSecretLeaked()
    }

    @Test func cancelInThePrompterTellsTheClientAtOnceAndAWrongPasscodeAsksAgain() throws {
        let desktop = try PromptDesktop()
        let (harness, _, _) = try lockedProvider(desktop)
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Unlock Tresor")
        try desktop.xdotool("type", "--delay", "20", "e2e-not-the-passcode")
        try desktop.xdotool("key", "Return")
        // Asked again, saying the passcode was wrong; then Cancel (Escape).
        usleep(1_000_000)
        try desktop.waitForWindow("Unlock Tresor")
        try desktop.xdotool("key", "Escape")
        let started = Date()
        let result = try lookup.finish(timeout: 30)
        #expect(Date().timeIntervalSince(started) < 10, "the client learns of the refusal without waiting out a timeout")
        #expect(result.stdout.isEmpty, "nothing read: \(result.stdout)")
        #expect(try harness.status().keybag == .locked)
        #expect(harness.daemonLog.contains("a wrong passcode in the desktop's prompter"))
        try harness.expectNoSecretLeaked()
    }
}

extension SecretServiceDesktopPromptTests {
    /// An item that needs the user present: its `Unlock` prompt asks on the desktop, the passcode
    /// typed there allows one read, and the next read asks again.
    @Test func anItemThatNeedsYouIsAllowedOnceInTheDesktopsPrompter() throws {
        let desktop = try PromptDesktop()
        let (harness, passcode, secret) = try lockedProvider(desktop)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n").succeeded)
        let marked = try harness.tresor(
            ["item", "update", "--attribute", "tresor-e2e=desktop", "--set", "accessControl=userPresence", "--passcode-stdin"], input: passcode + "\n")
        try #require(marked.succeeded, "\(marked.stderr)")
        let lookup = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        _ = try desktop.screenshot("secret-service-presence-prompt")
        try desktop.xdotool("type", "--delay", "20", passcode)
        try desktop.xdotool("key", "Return")
        let result = try lookup.finish(timeout: 30)
        #expect(result.stdout == secret, "\(result.stderr)")
        // One read: the next lookup asks again, and Escape refuses it.
        let again = try BackgroundProcess(harness: harness, executable: SecretTool.system, arguments: ["lookup", "tresor-e2e", "desktop"])
        try desktop.waitForWindow("Allow access to a secret")
        try desktop.xdotool("key", "Escape")
        #expect(try again.finish(timeout: 30).stdout.isEmpty)
        try harness.expectNoSecretLeaked()
    }
}

/// A desktop for one test: a display without a screen (`Xvfb :N`), a private session bus, and
/// Debian's `/usr/libexec/gcr-prompter` on both. Everything it started goes at deinit.
final class PromptDesktop {
    static let prompterPath = "/usr/libexec/gcr-prompter"
    static var canRun: Bool {
        ["/usr/bin/Xvfb", "/usr/bin/xdotool", "/usr/bin/import", "/usr/bin/dbus-daemon", prompterPath]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }
    /// Screenshots go beside the browser tests' (`.build/browser-artifacts`).
    static let artifacts: URL = {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/desktop-prompt-artifacts")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }()

    let display: String
    let busAddress: String
    let folder: URL
    private var processes: [Process] = []

    init() throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("tresor-e2e-desktop-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        display = try Self.freeDisplay()
        busAddress = "unix:path=\(folder.path)/bus"
        try start("/usr/bin/Xvfb", [display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
        try waitUntil("Xvfb's socket") { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(self.display.dropFirst())") }
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><keep_umask/><listen>\(busAddress)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
            </busconfig>
            """.write(to: folder.appendingPathComponent("bus.conf"), atomically: true, encoding: .utf8)
        try start("/usr/bin/dbus-daemon", ["--config-file=\(folder.path)/bus.conf", "--nofork", "--nopidfile"])
        try waitUntil("the bus's socket") { FileManager.default.fileExists(atPath: "\(self.folder.path)/bus") }
        try start(Self.prompterPath, [])
        try waitUntil("the prompter's bus name") { self.owned("org.gnome.keyring.SystemPrompter") }
    }

    deinit {
        for process in processes.reversed() where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// What every process on this desktop has in its environment.
    var environment: [String: String] {
        [
            "DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": busAddress, "HOME": folder.path, "XDG_RUNTIME_DIR": folder.path,
            "PATH": "/usr/bin:/bin", "NO_AT_BRIDGE": "1", "GDK_BACKEND": "x11", "LANG": "C.UTF-8",
        ]
    }

    /// Whether someone owns `name` on the desktop's bus.
    func owned(_ name: String) -> Bool {
        let answer = try? run(
            "/usr/bin/dbus-send",
            ["--bus=\(busAddress)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:\(name)"])
        return answer?.contains("boolean true") ?? false
    }

    @discardableResult
    private func start(_ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.append(process)
        return process
    }

    /// Runs a client on this desktop to its end; its standard output.
    @discardableResult
    func run(_ executable: String, _ arguments: [String]) throws -> String {
        try Harness.execute(URL(fileURLWithPath: executable), arguments, environment: environment, timeout: 30).result.stdout
    }

    /// Waits (up to 20 s) until a visible window named `title` shows, and gives it the keyboard.
    func waitForWindow(_ title: String) throws {
        try waitUntil("a window named \(title)") {
            !((try? self.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title])) ?? "").isEmpty
        }
        // No window manager gives it the keyboard: X's own focus does; GTK draws a moment after mapping.
        _ = try? run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", title, "windowfocus"])
        usleep(300_000)
    }

    func xdotool(_ arguments: String...) throws { try run("/usr/bin/xdotool", arguments) }

    /// A PNG of the whole screen, into the artifacts folder.
    func screenshot(_ name: String) throws -> URL {
        let file = Self.artifacts.appendingPathComponent("\(name).png")
        try? FileManager.default.removeItem(at: file)
        try run("/usr/bin/import", ["-display", display, "-window", "root", file.path])
        return file
    }

    func waitUntil(_ what: String, seconds: Double = 20, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw SecretServiceTestError.fixture("timed out waiting for \(what)") }
            usleep(20_000)
        }
    }

    /// A display number nobody uses (no lock file, no socket).
    private static func freeDisplay() throws -> String {
        for _ in 0..<200 {
            let number = Int.random(in: 100...899)
            if !FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") {
                return ":\(number)"
            }
        }
        throw SecretServiceTestError.fixture("no free display number")
    }
}
