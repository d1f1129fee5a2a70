import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// docs/SECURITY.md, "Availability": connections that hold a slot
/// without sending a request are closed, so they cannot keep a real client out; bodies
/// before sign-in are small; repeated failures are logged once per interval; an upload over
/// the account's quota is refused and loses nothing.
@Suite(.blocksItsThread, .serialized) struct WebAvailabilityTests {
    static let passcode = "e2e-availability-passcode"

    /// More idle connections than the server's 64 slots, slowloris ones dripping a request
    /// head, and ones that send a head and then a body too slowly: a real client is still
    /// served (before, it waited forever behind the idle ones).
    @Test func idleAndSlowConnectionsDoNotBlockARealClient() throws {
        let harness = try Harness(configuration: #"{"webConnectionIdleSeconds": 2, "webRequestSeconds": 3}"#)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<70 { held.append(try server.connect()) }
        // Slowloris: a request head, one byte at a time. Slow body: a head at once, then the
        // body one byte at a time.
        let slowloris = Data("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nX-Slow: ".utf8)
        let head = server.requestBytes(
            "POST", "/api/session", headers: [("Content-Type", "application/json"), ("Origin", server.origin)], body: nil, host: nil)
        let slowBody = head.dropLast(2) + Data("Content-Length: 1000\r\n\r\n".utf8)
        var dripping: [(fd: Int32, drip: Data)] = []
        // Connected while the idle ones hold the slots: these wait in the backlog, then drip.
        for index in 0..<8 {
            let fd = try server.connect()
            if index.isMultiple(of: 2) {
                dripping.append((fd, slowloris))
            } else {
                server.write(Data(slowBody), to: fd)
                dripping.append((fd, Data(repeating: 0x20, count: 1000)))
            }
        }
        held += dripping.map(\.fd)
        let drops = dripping
        let drip = Thread {
            for round in 0..<40 {
                for (fd, bytes) in drops where round < bytes.count {
                    _ = [bytes[bytes.startIndex + round]].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
                }
                usleep(250_000)
            }
        }
        drip.start()

        // A real client: answered (the send times out after 60 s without an answer).
        let answer = try server.send("GET", "/api/status")
        #expect(answer.status == 401 && answer.code == "unauthorized", "a real client was not served: \(answer.status)")
        let page = try server.send("GET", "/")
        #expect(page.status == 200)
        // The idle connections were closed by the server: reading one ends (EOF), not blocks.
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(recv(held[0], &buffer, buffer.count, 0) <= 0)
    }

    /// Before signing in, a body is at most 16 KiB: refused from `Content-Length`, unread.
    @Test func bodiesBeforeSignInAreBounded() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let big = Data(#"{"name":"bob","password":""#.utf8) + Data(repeating: 0x61, count: 1024 * 1024) + Data(#""}"#.utf8)
        for path in ["/api/session", "/api/accounts"] {
            let response = try server.send("POST", path, headers: [("Content-Type", "application/json"), ("Origin", server.origin)], body: big)
            #expect(response.status == 413 && response.code == "requestTooLarge", "\(path): \(response.status)")
        }
    }

    /// A flood of bad requests — throttled sign-ins, requests for notes that are not there,
    /// registrations without an invite — adds a few lines to the log, not one per request.
    @Test func logStaysBoundedUnderAFloodOfBadRequests() throws {
        let harness = try Harness()
        // The production log level (the harness's default is trace).
        let server = try harness.startWebDaemon(passcode: Self.passcode, extraArguments: ["--log-level", "info"])
        let password = "e2e-flood-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(password)
        var alice = WebBrowser(server)
        #expect(try alice.register("alice", password).status == 201)
        let before = harness.daemonLog.utf8.count
        var guesser = WebBrowser(server)
        // 300 rounds at least, and on for longer than one interval, so that a kind is logged
        // again with the count left out (a fast machine makes 900 requests in less).
        let started = Date()
        var round = 0
        while round < 300 || Date().timeIntervalSince(started) < 11 {
            _ = try guesser.signIn("alice", "wrong-guess-\(round)")
            #expect(try alice.get("/api/notes/not-a-note-\(round)").status == 404)
            _ = try alice.delete("/api/notes/not-a-note-\(round)")
            round += 1
        }
        let grown = harness.daemonLog.utf8.count - before
        // One line per kind and 10 s, a few hundred bytes each; 900 requests logged one by
        // one would be well over 100 KiB.
        #expect(grown < 16 * 1024, "the log grew by \(grown) bytes for \(3 * round) bad requests")
        #expect(harness.daemonLog.contains("repeated"), "the left-out count is said")
        try harness.expectNoSecretLeaked()
    }

    /// A web daemon with `configuration`, and Alice signed in with one note of hers.
    func aliceWithANote(_ configuration: String, title: String, body: String) throws -> (Harness, WebBrowser, String) {
        let harness = try Harness(configuration: configuration)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let password = "e2e-availability-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(password)
        var alice = WebBrowser(server)
        #expect(try alice.register("alice", password).status == 201)
        let id = try alice.createNote(title: title, body: body)
        return (harness, alice, id)
    }

    /// Locking and saving a locked body store new ciphertext: both count against the quota,
    /// before anything about the request is checked further.
    @Test func lockedNoteWritesCountAgainstTheQuota() throws {
        let (harness, alice, id) = try aliceWithANote(#"{"webAccountQuotaBytes": 20000}"#, title: "to lock", body: "plain body")
        let big = Data(repeating: 7, count: 30_000).base64EncodedString()
        let proof = Data(repeating: 1, count: 32).base64EncodedString()
        let lock = try alice.post(
            "/api/notes/\(id)/lock",
            [
                "passphraseProof": ["passphraseID": 1, "proof": proof], "wrappedKey": proof, "noteProofHash": proof,
                "iv": Data(count: 12).base64EncodedString(), "tag": Data(count: 16).base64EncodedString(), "ciphertext": big,
            ])
        #expect(lock.status == 507 && lock.code == "quotaExceeded", "\(lock.status) \(lock.text)")
        let save = try alice.put(
            "/api/notes/\(id)/locked-body",
            [
                "iv": Data(count: 12).base64EncodedString(), "tag": Data(count: 16).base64EncodedString(), "ciphertext": big, "noteProof": proof,
            ])
        #expect(save.status == 507 && save.code == "quotaExceeded", "\(save.status) \(save.text)")
        #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == "plain body", "nothing changed")
        try harness.expectNoSecretLeaked()
    }

    /// Uploads of one account at once cannot all take the last room: the check and the write
    /// are one step per account.
    @Test func concurrentUploadsCannotOvershootTheQuota() throws {
        let (harness, alice, id) = try aliceWithANote(#"{"webAccountQuotaBytes": 100000}"#, title: "race", body: "b")
        nonisolated(unsafe) let browser = alice  // only read: each request is made on its own connection
        let statuses = EventLog()
        DispatchQueue.concurrentPerform(iterations: 10) { n in
            let status =
                (try? browser.request("POST", "/api/notes/\(id)/attachments?kind=file&name=\(n).bin", raw: Data(repeating: UInt8(n), count: 30_000))
                    .status) ?? -1
            statuses.append("\(status)")
        }
        let all = statuses.entries.compactMap { Int($0) }
        #expect(all.filter { $0 == 201 }.count == 3, "\(all.sorted())")
        #expect(all.filter { $0 == 507 }.count == 7, "\(all.sorted())")
        let attachments = try alice.get("/api/notes/\(id)").json?["attachments"] as? [[String: Any]]
        #expect(attachments?.count == 3)
        try harness.expectNoSecretLeaked()
    }

    /// A client that asks for a large attachment and never reads the answer holds its slot no
    /// longer than an idle one: the whole answer is handed to the connection at once, and the
    /// idle deadline runs from there (docs/WEB.md, "Availability").
    @Test func aClientThatStopsReadingIsClosed() throws {
        let (harness, alice, id) = try aliceWithANote(#"{"webConnectionIdleSeconds": 2, "webRequestSeconds": 2}"#, title: "download", body: "b")
        // More than the kernel's buffers on both sides hold, so the server is left with bytes
        // nobody takes.
        let size = 24 * 1024 * 1024
        let upload = try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=big.bin", raw: Data(repeating: 3, count: size))
        let attachment = try #require(upload.json?["id"] as? String, "\(upload.status)")

        // The request, written by hand on a socket, then not read.
        let fd = try alice.server.connect()
        defer { close(fd) }
        let request = alice.server.requestBytes(
            "GET", "/api/notes/\(id)/attachments/\(attachment)",
            headers: [("Cookie", "tresor_session=\(alice.token ?? "")"), ("X-Tresor-Origin-Token", alice.originToken ?? "")], body: nil, host: nil)
        alice.server.write(request, to: fd)
        sleep(6)
        // A real client meanwhile, and after: served.
        #expect(try alice.get("/api/notes/\(id)").status == 200)
        // The stalled connection was closed: reading it now ends before the whole answer.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var ended = false
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { ended = true; break }
            if count < 0 { break }
            received += count
        }
        #expect(ended, "the server closed the connection")
        #expect(received < size, "it did not send the whole answer to a client that stopped reading (\(received) bytes)")
        try harness.expectNoSecretLeaked()
    }

    /// Over the account's quota: `507 quotaExceeded`, and what was stored stays.
    @Test func uploadOverQuotaIsRefusedAndNothingElseIsLost() throws {
        let (harness, alice, id) = try aliceWithANote(#"{"webAccountQuotaBytes": 100000}"#, title: "quota", body: "kept body")
        let first = Data(repeating: 1, count: 60_000)
        let stored = try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=first.bin", raw: first)
        #expect(stored.status == 201)
        let over = try alice.request("POST", "/api/notes/\(id)/attachments?kind=file&name=second.bin", raw: Data(repeating: 2, count: 60_000))
        #expect(over.status == 507 && over.code == "quotaExceeded", "\(over.status) \(over.text)")
        let bigNote = try alice.post("/api/notes", ["title": "big", "body": String(repeating: "x", count: 50_000)])
        #expect(bigNote.status == 507 && bigNote.code == "quotaExceeded")
        let bigEdit = try alice.patch("/api/notes/\(id)", ["body": String(repeating: "y", count: 50_000)])
        #expect(bigEdit.status == 507 && bigEdit.code == "quotaExceeded")

        let after = try alice.get("/api/notes/\(id)").json
        let attachments = after?["attachments"] as? [[String: Any]]
        #expect(after?["body"] as? String == "kept body" && attachments?.count == 1)
        let attachmentID = try #require(attachments?.first?["id"] as? String)
        #expect(try alice.get("/api/notes/\(id)/attachments/\(attachmentID)").body == first)
        // Small changes still fit.
        #expect(try alice.patch("/api/notes/\(id)", ["title": "still fits"]).status == 200)
        try harness.expectNoSecretLeaked()
    }
}
