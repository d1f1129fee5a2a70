import Foundation
import Synchronization
import Testing
import TresorCrypto
import TresorDBus
import TresorTestSupport

@testable import TresorDesktopPrompt

/// The prompter client against Debian's real `gcr-prompter` on a display without a screen: the
/// user's keys are typed with xdotool, the prompt is photographed with ImageMagick.
@Suite(.blocksItsThread, .serialized, .enabled(if: DesktopSession.canRun, "needs Xvfb, xdotool, ImageMagick and gcr (scripts/test installs them)"))
struct SystemPrompterTests {
    static let text = PromptText(
        title: "Tresor test prompt",
        message: "secret-tool wants “Mail login (alice@example.org)”",
        description: "/usr/bin/secret-tool (pid 4242), run by bash (pid 4200) in gnome-terminal",
        choice: "_Remember for this session", continueLabel: "_Allow", cancelLabel: "_Deny")

    @Test func aTypedPasswordArrivesExactly() throws {
        let desktop = try DesktopSession()
        let answer = Pending<PasswordAnswer>()
        SystemPrompter(busAddress: desktop.busAddress).password(Self.text, timeout: .seconds(30)) { answer.set($0) }
        try desktop.waitForWindow(Self.text.title)
        let screenshot = try desktop.screenshot("password-prompt")
        #expect(try Data(contentsOf: screenshot).count > 1_000)
        try desktop.xdotool("type", "--delay", "20", "correct horse 42!")
        try desktop.xdotool("key", "Return")
        let result = try answer.wait()
        #expect(result == .success(.password(TypedPassword(SecretText("correct horse 42!")), choiceChosen: false)))
    }

    @Test func continueWithTheChoiceTicked() throws {
        let desktop = try DesktopSession()
        let answer = Pending<ConfirmAnswer>()
        SystemPrompter(busAddress: desktop.busAddress).confirm(Self.text, timeout: .seconds(30)) { answer.set($0) }
        try desktop.waitForWindow(Self.text.title)
        _ = try desktop.screenshot("confirm-prompt")
        try desktop.xdotool("key", "alt+r")  // the box's mnemonic ticks it
        try desktop.xdotool("key", "alt+a")  // Allow
        #expect(try answer.wait() == .success(.allowedWithChoice))
    }

    @Test func continueWithTheChoiceNotTicked() throws {
        let desktop = try DesktopSession()
        let answer = Pending<ConfirmAnswer>()
        SystemPrompter(busAddress: desktop.busAddress).confirm(Self.text, timeout: .seconds(30)) { answer.set($0) }
        try desktop.waitForWindow(Self.text.title)
        try desktop.xdotool("key", "alt+a")
        #expect(try answer.wait() == .success(.allowedOnce))
    }

    @Test func cancel() throws {
        let desktop = try DesktopSession()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let confirmed = Pending<ConfirmAnswer>()
        prompter.confirm(Self.text, timeout: .seconds(30)) { confirmed.set($0) }
        try desktop.waitForWindow(Self.text.title)
        try desktop.xdotool("key", "alt+d")  // Deny
        #expect(try confirmed.wait() == .success(.cancelled))

        // A password prompt closed with Escape: cancelled too, and no password.
        let typed = Pending<PasswordAnswer>()
        prompter.password(Self.text, timeout: .seconds(30)) { typed.set($0) }
        try desktop.waitForWindow(Self.text.title)
        try desktop.xdotool("type", "not-sent")
        try desktop.xdotool("key", "Escape")
        #expect(try typed.wait() == .success(.cancelled))
    }

    @Test func dismissedByTheTimeoutAndTheWindowClosed() throws {
        let desktop = try DesktopSession()
        let started = ContinuousClock.now
        let answer = try SystemPrompter(busAddress: desktop.busAddress).confirm(Self.text, timeout: .seconds(3))
        #expect(answer == .dismissed)
        // Ended by the 3 s timeout: without it the prompt would wait for an answer nobody gives.
        #expect(ContinuousClock.now - started < .seconds(20))
        try waitUntil("the prompt's window to close", seconds: 5) {
            ((try? desktop.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", Self.text.title])) ?? "x").isEmpty
        }
    }

    @Test func aCancellationClosesThePrompt() throws {
        let desktop = try DesktopSession()
        let answer = Pending<ConfirmAnswer>()
        let cancellation = SystemPrompter(busAddress: desktop.busAddress).confirm(Self.text, timeout: .seconds(30)) { answer.set($0) }
        try desktop.waitForWindow(Self.text.title)
        cancellation.cancel()
        #expect(try answer.wait(seconds: 5) == .success(.dismissed))
    }

    @Test func noPrompterIsAClearErrorAtOnce() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        #expect(try prompter.availability() == .absent)
        let started = ContinuousClock.now
        #expect(throws: PrompterError.noPrompter) { try prompter.confirm(Self.text, timeout: .seconds(30)) }
        // At once rather than after the 30 s timeout.
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(PrompterError.noPrompter.description.contains("no desktop prompter"))
    }

    @Test func anActivatablePrompterIsStartedByTheBus() throws {
        let desktop = try DesktopSession(prompterStarted: false, activatable: true)
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        #expect(try prompter.availability() == .startable)
        let answer = Pending<ConfirmAnswer>()
        prompter.confirm(Self.text, timeout: .seconds(30)) { answer.set($0) }
        do {
            try desktop.waitForWindow(Self.text.title)
        } catch {
            let windows = (try? desktop.run("/usr/bin/xdotool", ["search", "--name", "."])) ?? ""
            let owner = (try? DBusConnection(address: desktop.busAddress).callBus("GetNameOwner", [.string(SystemPrompter.busName)])) ?? []
            let processes = (try? desktop.run("/usr/bin/pgrep", ["-a", "-f", "gcr-prompter"])) ?? ""
            Issue.record("the prompter's name: \(owner); its processes: \(processes)")
            _ = try? desktop.screenshot("activatable-no-window")
            Issue.record("no window; the prompt answered \(String(describing: answer.peek())); windows: \(windows)")
            throw error
        }
        try desktop.xdotool("key", "alt+a")
        #expect(try answer.wait() == .success(.allowedOnce))
        let executable = try #require(try prompter.availability().running, "the started prompter is not running").executable
        #expect(executable == DesktopSession.prompterPath)
    }

    @Test func theRealPrompterIsRecognized() throws {
        let desktop = try DesktopSession()
        let (pid, executable) = try #require(
            try SystemPrompter(busAddress: desktop.busAddress).availability().running, "gcr-prompter is not recognized")
        #expect(pid > 0 && executable == DesktopSession.prompterPath)
    }

    /// Any process of the user can own the name: one that is not the prompter is never asked.
    @Test func aPythonOwningTheNameIsRefused() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        try desktop.start(
            "/usr/bin/python3",
            [
                "-c",
                """
                import dbus, time
                bus = dbus.bus.BusConnection("\(desktop.busAddress)")
                bus.request_name("org.gnome.keyring.SystemPrompter")
                time.sleep(120)
                """,
            ])
        try desktop.waitUntilOwned()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let why = try #require(try prompter.availability().untrustedReason, "python3 was taken for the prompter")
        #expect(why.contains("python3"))
        #expect(throws: PrompterError.self) { try prompter.confirm(Self.text, timeout: .seconds(5)) }
        do {
            _ = try prompter.password(Self.text, timeout: .seconds(5))
        } catch let error as PrompterError {
            guard case .untrustedPrompter = error else { throw error }
        }
    }

    /// Python mounted over the prompter's path in a namespace of its own: there it *is*
    /// /usr/libexec/gcr-prompter (its /proc/<pid>/exe says so), here it is not.
    @Test func aBinaryMountedOverThePrompterInItsOwnNamespaceIsRefused() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        let python = desktop.folder.appendingPathComponent("python3")
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, toPath: python.path)
        let script = desktop.folder.appendingPathComponent("impostor.py")
        try """
        import dbus, time
        bus = dbus.bus.BusConnection("\(desktop.busAddress)")
        bus.request_name("org.gnome.keyring.SystemPrompter")
        time.sleep(120)
        """.write(to: script, atomically: true, encoding: .utf8)
        try desktop.start(
            "/usr/bin/unshare",
            [
                "-Urm", "sh", "-c",
                "mount --bind \(python.path) \(DesktopSession.prompterPath) && exec \(DesktopSession.prompterPath) \(script.path)",
            ])
        try desktop.waitUntilOwned()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let why = try #require(try prompter.availability().untrustedReason, "a binary mounted over the prompter's path was taken for the prompter")
        #expect(why.contains("namespace"))
        #expect(throws: PrompterError.self) { try prompter.confirm(Self.text, timeout: .seconds(5)) }
    }

    /// The genuine prompter made to load code of the user's (`LD_PRELOAD`) is not the prompter.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc")))
    func thePrompterWithPreloadedCodeIsRefused() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        let library = desktop.folder.appendingPathComponent("listen.so")
        let source = desktop.folder.appendingPathComponent("listen.c")
        try "void tresor_test_preloaded(void) {}\n".write(to: source, atomically: true, encoding: .utf8)
        try desktop.run("/usr/bin/gcc", ["-shared", "-fPIC", "-o", library.path, source.path])
        try desktop.start(DesktopSession.prompterPath, [], environment: ["LD_PRELOAD": library.path])
        try desktop.waitUntilOwned()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let why = try #require(try prompter.availability().untrustedReason, "a prompter running the user's code was trusted")
        #expect(why.contains(library.path))
        #expect(throws: PrompterError.self) { try prompter.confirm(Self.text, timeout: .seconds(5)) }
    }

    /// A borrowed connection: a Python process owns the name, forks, and executes the genuine
    /// prompter in the connected process while its child keeps the connection (and would answer
    /// the questions). The bus names the genuine prompter's pid; its sockets say otherwise —
    /// closed at `exec` (what libdbus does), the prompter holds only the connection it opened
    /// itself, one fewer than the bus names for it; kept across `exec`, another program holds it.
    @Test(arguments: [false, true])
    func aConnectionBorrowedByExecutingThePrompterIsRefused(keptAcrossExec: Bool) throws {
        let desktop = try DesktopSession(prompterStarted: false)
        try borrowByExecutingThePrompter(desktop, keptAcrossExec: keptAcrossExec)
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        let why = try #require(
            try prompter.availability().untrustedReason, "a connection borrowed by executing the prompter was taken for the prompter")
        #expect(why.contains("connection"), "\(why)")
        #expect(throws: PrompterError.self) { try prompter.confirm(Self.text, timeout: .seconds(5)) }
    }

    /// A connection's hold is checked once; the genuine prompter checked before vouches for no
    /// connection that owns the name after it.
    @Test func aCheckedPrompterVouchesForNoLaterOwner() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        let genuine = try desktop.start(DesktopSession.prompterPath, [])
        try desktop.waitUntilOwned()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        _ = try #require(try prompter.availability().running, "the genuine prompter is not recognized")
        kill(genuine.processIdentifier, SIGKILL)
        genuine.waitUntilExit()
        let bus = try DBusConnection(address: desktop.busAddress)
        try waitUntil("the name to be free") { PrompterOwner.owner(on: bus) == nil }
        try borrowByExecutingThePrompter(desktop, keptAcrossExec: false)
        let why = try #require(try prompter.availability().untrustedReason, "a borrowed connection was taken for the prompter checked before it")
        #expect(why.contains("connection"), "\(why)")
    }

    /// Runs the borrow: returns once the connection that owns the name is the genuine prompter's
    /// pid's and, closed at `exec`, the prompter has opened a connection of its own.
    private func borrowByExecutingThePrompter(_ desktop: DesktopSession, keptAcrossExec: Bool) throws {
        try desktop.start(
            "/usr/bin/python3",
            [
                "-c",
                """
                import dbus, os, time
                bus = dbus.bus.BusConnection("\(desktop.busAddress)")
                bus.request_name("org.gnome.keyring.SystemPrompter")
                if \(keptAcrossExec ? "True" : "False"):
                    for fd in os.listdir("/proc/self/fd"):
                        try:
                            if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                                os.set_inheritable(int(fd), True)
                        except OSError:
                            pass
                parent = os.getpid()
                if os.fork() == 0:
                    while os.getppid() == parent:
                        time.sleep(0.2)
                    os._exit(0)
                os.execv("\(DesktopSession.prompterPath)", ["gcr-prompter"])
                """,
            ])
        try desktop.waitUntilOwned()
        let bus = try DBusConnection(address: desktop.busAddress)
        func pid(of name: String) -> UInt32? {
            guard case .uint32(let pid)? = try? bus.callBus("GetConnectionUnixProcessID", [.string(name)]).first else { return nil }
            return pid
        }
        let owner = try #require(PrompterOwner.owner(on: bus))
        let ownerPid = try #require(pid(of: owner))
        try waitUntil("the connected process to run the genuine prompter") {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(ownerPid)/exe")) == DesktopSession.prompterPath
        }
        if !keptAcrossExec {
            // The genuine prompter connects on its own and waits for the name: two connections now.
            try waitUntil("the prompter's own connection") {
                guard case .array(_, let names)? = try? bus.callBus("ListNames", []).first else { return false }
                return names.contains { $0.stringValue.map { $0.hasPrefix(":") && $0 != owner && pid(of: $0) == ownerPid } ?? false }
            }
        }
        #expect(PrompterOwner.owner(on: bus) == owner, "the borrowed connection still owns the name")
    }

    /// The prompter's own binary, copied where its owner could change it, is not the prompter.
    @Test func aCopyOfThePrompterIsRefused() throws {
        let desktop = try DesktopSession(prompterStarted: false)
        let copy = desktop.folder.appendingPathComponent("gcr-prompter")
        try FileManager.default.copyItem(atPath: DesktopSession.prompterPath, toPath: copy.path)
        try desktop.start(copy.path, [])
        try desktop.waitUntilOwned()
        let prompter = SystemPrompter(busAddress: desktop.busAddress)
        #expect(throws: PrompterError.self) { try prompter.confirm(Self.text, timeout: .seconds(5)) }
        let why = try #require(try prompter.availability().untrustedReason, "a copy was taken for the prompter")
        #expect(why.contains(desktop.folder.lastPathComponent))
    }
}

/// An answer another thread hands over.
final class Pending<Answer: Sendable & Equatable>: Sendable {
    private let value = Mutex<Result<Answer, PrompterError>?>(nil)

    func set(_ result: Result<Answer, PrompterError>) { value.withLock { $0 = result } }

    /// The answer if there is one yet.
    func peek() -> Result<Answer, PrompterError>? { value.withLock { $0 } }

    func wait(seconds: Double = 40) throws -> Result<Answer, PrompterError> {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let result = value.withLock({ $0 }) { return result }
            usleep(10_000)
        }
        throw DesktopSession.DesktopError.timedOut("the prompt's answer")
    }
}

extension SystemPrompter.Availability {
    /// The running prompter's process and executable; nil when no trusted prompter runs.
    var running: (pid: Int32, executable: String)? {
        guard case .running(let pid, let executable) = self else { return nil }
        return (pid, executable)
    }

    /// Why the name's owner is not trusted; nil when it is not ``untrusted(_:)``.
    var untrustedReason: String? {
        guard case .untrusted(let why) = self else { return nil }
        return why
    }
}
