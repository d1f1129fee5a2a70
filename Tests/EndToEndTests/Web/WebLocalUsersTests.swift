import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// docs/SECURITY.md, "Local users are not the user" and "Throttles that cannot be raced": the
/// web server on loopback serves only the local user who runs
/// the daemon unless config.json admits others; a web guesser at `local` cannot lock the
/// owner out of the keybag; another account's requests do not keep the keybag unlocked; and
/// a burst of concurrent sign-ins checks no more passwords than the limit allows.
@Suite(.blocksItsThread, .serialized) struct WebLocalUsersTests {
    static let passcode = "e2e-local-users-passcode"
    /// Another local user (nobody), as `setpriv` makes one.
    static let otherUID = 65534

    /// A raw HTTP GET of `/` from `python3`, as uid `uid` (nil: ours), over IPv4 or over an
    /// IPv6 socket to the IPv4-mapped address (listed in /proc/net/tcp6). Prints the status
    /// line, then the body.
    func fetch(_ harness: Harness, port: Int, as uid: Int?, ipv6Mapped: Bool = false) throws -> (status: Int, body: String) {
        let script = """
            import socket, sys
            port = int(sys.argv[1])
            if sys.argv[2] == "6":
                s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM); s.connect(("::ffff:127.0.0.1", port))
            else:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.connect(("127.0.0.1", port))
            s.settimeout(30)
            s.sendall(("GET / HTTP/1.1\\r\\nHost: 127.0.0.1:%d\\r\\nConnection: close\\r\\n\\r\\n" % port).encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            head, _, body = data.partition(b"\\r\\n\\r\\n")
            print(head.split(b"\\r\\n")[0].decode())
            print(body[:400].decode(errors="replace"))
            """
        let python = ["/usr/bin/python3", "-c", script, "\(port)", ipv6Mapped ? "6" : "4"]
        let result: Harness.Result
        if let uid {
            result = try harness.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + python, timeout: 60)
        } else {
            result = try harness.run(URL(fileURLWithPath: python[0]), Array(python.dropFirst()), timeout: 60)
        }
        let lines = result.stdout.split(separator: "\n", maxSplits: 1).map(String.init)
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        return (status, lines.count > 1 ? lines[1] : "")
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func anotherLocalUserIsRefusedUnlessAdmitted() throws {
        let harness = try Harness()
        var server = try harness.startWebDaemon(passcode: Self.passcode)

        // The owner (the daemon's uid) is served, over IPv4 and over an IPv4-mapped IPv6 socket.
        #expect(try fetch(harness, port: server.port, as: nil).status == 200)
        #expect(try fetch(harness, port: server.port, as: nil, ipv6Mapped: true).status == 200)
        // Another local user is refused before any route, both ways.
        for mapped in [false, true] {
            let other = try fetch(harness, port: server.port, as: Self.otherUID, ipv6Mapped: mapped)
            #expect(other.status == 403 && other.body.contains("peerRejected"), "uid \(Self.otherUID), mapped \(mapped): \(other)")
        }
        // The daemon still serves its owner after refusing.
        #expect(try server.send("GET", "/").status == 200)
        #expect(harness.daemonLog.contains("connection of another local user refused"))

        // config.json admits another uid…
        harness.stopDaemon()
        try harness.mergeConfiguration(["webAllowedUIDs": [Self.otherUID]])
        server = try harness.startWebDaemon(passcode: Self.passcode)
        #expect(try fetch(harness, port: server.port, as: Self.otherUID).status == 200)
        #expect(try fetch(harness, port: server.port, as: 65533).status == 403, "only the uids listed")

        // …or every local user.
        harness.stopDaemon()
        try harness.mergeConfiguration(["webAllowAnyLocalUser": true])
        server = try harness.startWebDaemon(passcode: Self.passcode)
        #expect(try fetch(harness, port: server.port, as: 65533).status == 200)
    }

    /// A guesser at `local` on the web meets the web's own limit; the keybag's counter and
    /// delays — which hold up `tresor unlock` for everyone — stay untouched.
    @Test func wrongWebPasscodesDoNotMoveTheKeybagCounter() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        #expect(try harness.tresor(["lock"]).succeeded)
        var guesser = WebBrowser(server)
        var statuses: [Int] = []
        for attempt in 1...8 { statuses.append(try guesser.signIn("local", "wrong-passcode-\(attempt)").status) }
        // The web's own limit: five free, then waits (a loaded machine may let one through after a wait).
        #expect(statuses.prefix(5).allSatisfy { $0 == 401 } && statuses.contains(429), "the web's own limit: \(statuses)")
        let status = try harness.status()
        #expect(status.failedAttempts == 0 && status.retryAfterSeconds == nil, "the keybag counted web guesses")
        // The owner unlocks at once, with no delay to wait out.
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try harness.status().keybag == .unlocked)
        try harness.expectNoSecretLeaked()
    }

    /// Requests of another web account are not the owner's activity: the keybag auto-locks
    /// while they go on. (Before, every session's request touched the auto-lock timer.)
    @Test func anotherAccountsRequestsDoNotKeepTheKeybagUnlocked() throws {
        let harness = try Harness(configuration: #"{"autoLockSeconds": 2}"#)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let password = "e2e-alice-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(password)
        var alice = WebBrowser(server)
        #expect(try alice.register("alice", password).status == 201)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        // Alice keeps working for three times the auto-lock period.
        var locked = false
        for _ in 0..<24 {
            #expect(try alice.get("/api/folders").status == 200)
            usleep(250_000)
            if try harness.status().keybag == .locked { locked = true }
        }
        #expect(locked, "alice's requests kept the owner's keybag unlocked")
        try harness.expectNoSecretLeaked()
    }

    /// 60 wrong sign-ins at once: at most the five free ones reach the password check.
    /// Counted from the daemon's `web: password checked` lines (one per KDF run, at debug level).
    @Test func concurrentSignInsCheckNoMorePasswordsThanTheLimit() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let password = "e2e-bob-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(password)
        var bob = WebBrowser(server)
        #expect(try bob.register("bob", password).status == 201)
        let checkedBefore = harness.daemonLog.components(separatedBy: "web: password checked").count - 1

        let requests = (1...60).map { attempt in
            (
                method: "POST", target: "/api/session",
                headers: [("Content-Type", "application/json"), ("Origin", server.origin)],
                body: Optional(Data(#"{"name":"bob","password":"wrong-guess-\#(attempt)"}"#.utf8))
            )
        }
        let started = Date()
        let answers = try server.sendTogether(requests)
        let elapsed = Date().timeIntervalSince(started)
        // What the limit allows: 5 free checks; each further one only 1 s, 2 s, 4 s … after the
        // previous check ended — so a burst the loaded daemon took `elapsed` seconds to answer
        // may have checked at most log2(elapsed + 1) more. Checked first and counted after the
        // KDF, all 60 were checked.
        let allowed = 5 + Int(log2(elapsed + 1))
        let failed = answers.filter { $0.status == 401 }.count, throttled = answers.filter { $0.status == 429 }.count
        #expect(failed + throttled == 60, "every answer is a refusal: \(answers.map(\.status))")
        #expect(failed <= allowed, "\(failed) passwords were checked in \(elapsed) s; \(allowed) allowed")
        usleep(200_000)
        let checked = harness.daemonLog.components(separatedBy: "web: password checked").count - 1 - checkedBefore
        #expect(checked == failed && checked <= allowed, "the daemon ran the KDF \(checked) times for 60 concurrent sign-ins")
        // Bob himself still waits: the burst used up the name's free failures. The shortest
        // wait is 1 s from the last check — which may have ended well before the burst's last
        // (throttled) answer, but not before it started — so on a machine too loaded to ask
        // within it, a success is what the limit allows.
        var late = WebBrowser(server)
        let lateStatus = try late.signIn("bob", password).status
        let sinceStart = Date().timeIntervalSince(started)
        #expect(lateStatus == 429 || (lateStatus == 200 && sinceStart >= 1), "bob answered \(lateStatus) \(sinceStart) s after the burst began")
        try harness.expectNoSecretLeaked()
    }
}
