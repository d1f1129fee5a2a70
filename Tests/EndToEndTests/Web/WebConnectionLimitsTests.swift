import Foundation
import Testing
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Other users cannot starve the owner's web server (docs/WEB.md, "Availability"): every client
/// but the owner has a share of the connections, counted as the connection opens and before a
/// byte of it is read, and the shares leave room for the owner; a connection that sends no
/// request is closed after a few seconds, a live-update stream is not; behind a trusted proxy
/// each request counts for the client `X-Forwarded-For` names.
@Suite(.blocksItsThread, .serialized) struct WebConnectionLimitsTests {
    static let passcode = "e2e-connection-limits-passcode"

    /// Holds `count` connections to `port` without sending a byte, and opens a new one for each
    /// the server closes (every half second), until its standard input closes. Prints `ready`
    /// once all are open.
    static let holder = """
        import select, socket, sys, time
        port, count = int(sys.argv[1]), int(sys.argv[2])
        def opened():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.setblocking(False)
            s.connect_ex(("127.0.0.1", port)); return s
        held = [opened() for _ in range(count)]
        print("ready", flush=True)
        while True:
            if select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.read(1): break
            readable = select.select(held, [], [], 0.5)[0]
            for s in readable:
                try:
                    gone = s.recv(1) == b""
                except OSError:
                    gone = True
                if gone:
                    held.remove(s); s.close(); held.append(opened())
        """

    /// The attack: another local user holds 300 connections open without a request, and opens
    /// a new one for each the server closes. The owner's requests, each on a new connection, are
    /// all answered — within 20 s each, less than the 30 s after which the server used to close
    /// an idle connection: before, the owner's connections waited in the accept queue behind
    /// hundreds of the other user's, and none of six was answered.
    @Test(.enabled(if: TestUser.available))
    func anotherLocalUsersIdleConnectionsDoNotStarveTheOwner() throws {
        let user = try TestUser.shared.get()
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)

        let attacker = Process()
        (attacker.executableURL, attacker.arguments) = user.wrapping(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.holder, "\(server.port)", "300"])
        let input = Pipe(), output = Pipe()
        attacker.standardInput = input
        attacker.standardOutput = output
        attacker.standardError = FileHandle.nullDevice
        try attacker.run()
        defer {
            try? input.fileHandleForWriting.close()
            attacker.waitUntilEnded()
        }
        let ready = output.fileHandleForReading.availableData
        #expect(String(decoding: ready, as: UTF8.self).contains("ready"), "the other user's connections were not opened")

        var answered = 0
        for _ in 0..<6 {
            let fd = try server.connect()
            defer { close(fd) }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            server.write(server.requestBytes("GET", "/api/status", headers: [], body: nil, host: nil), to: fd)
            if let answer = try? WebServerAddress.parse(WebServerAddress.readAll(fd)), answer.code == "unauthorized" { answered += 1 }
        }
        #expect(answered == 6, "only \(answered) of the owner's 6 requests were answered")
        #expect(attacker.isRunning, "the other user's holder stopped")
        #expect(harness.daemonLog.contains("connection over its client's share closed"), "the other user's connections were not limited")
    }

    /// A connection that sends no request is closed after `webFirstRequestSeconds`; a page's
    /// live-update stream stays open long past it, and still brings what changes.
    @Test func anIdleConnectionIsClosedAndAStreamIsNot() throws {
        let harness = try Harness(configuration: #"{"webFirstRequestSeconds": 1}"#)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        var browser = WebBrowser(server)
        #expect(try browser.signIn("local", Self.passcode).status == 200)

        let stream = try EventStreamReader(browser)
        #expect(stream.waitFor("text/event-stream", seconds: 30), "the stream did not open: \(stream.received)")
        // Closed by the server: the read ends (0), rather than timing out after 60 s (-1).
        let idle = try server.connect()
        defer { close(idle) }
        var byte: UInt8 = 0
        #expect(recv(idle, &byte, 1, 0) == 0, "an idle connection stayed open")
        // Well past the deadline (the idle connection was closed after it), the stream still
        // brings a change.
        sleep(2)
        _ = try browser.createNote(title: "after the deadline", body: "b")
        #expect(stream.waitFor("event: note", seconds: 30), "the stream was closed: \(stream.received)")
    }

    /// Behind a trusted proxy every connection is the proxy's; each request counts for the client
    /// its `X-Forwarded-For` names. One client holding its share of requests (live-update
    /// streams) is refused more — `429 throttled` — while another client is served.
    @Test func behindATrustedProxyEachClientHasItsShare() throws {
        let harness = try Harness(configuration: #"{"webTrustedProxies": ["127.0.0.1"], "webConnectionsPerClient": 3}"#)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        var browser = WebBrowser(server)
        #expect(try browser.signIn("local", Self.passcode).status == 200)
        let greedy = [("X-Forwarded-For", "203.0.113.9")]

        var streams: [Int32] = []
        defer { streams.forEach { close($0) } }
        for _ in 0..<3 {
            let fd = try server.connect()
            streams.append(fd)
            var headers: [(String, String)] = [("Accept", "text/event-stream")] + greedy
            if let token = browser.token { headers.append(("Cookie", "tresor_session=\(token)")) }
            if let originToken = browser.originToken { headers.append(("X-Tresor-Origin-Token", originToken)) }
            server.write(server.requestBytes("GET", "/api/events", headers: headers, body: nil, host: nil), to: fd)
            var head = [UInt8](repeating: 0, count: 512)
            #expect(String(decoding: head[0..<max(0, recv(fd, &head, head.count, 0))], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        }
        let refused = try browser.request("GET", "/api/folders", headers: greedy)
        #expect(refused.status == 429 && refused.code == "throttled", "\(refused.status) \(refused.text)")
        #expect(try browser.request("GET", "/api/folders", headers: [("X-Forwarded-For", "203.0.113.10")]).status == 200)
        // Its streams ended, the client is served again.
        streams.forEach { close($0) }
        streams = []
        var served = false
        for _ in 0..<50 where !served {
            served = try browser.request("GET", "/api/folders", headers: greedy).status == 200
            if !served { usleep(100_000) }
        }
        #expect(served, "the client's share was not given back")
    }
}
