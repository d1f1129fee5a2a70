import Foundation
import Synchronization
import Testing
import TresorTestSupport

/// Several `tresord` instances serving one set of accounts from one PostgreSQL database
/// (docs/WEB.md, "Running a Tresor server"): whatever instance a request reaches, it
/// gets the same answer — sessions, sign-outs, shares, throttles and attachments — and what
/// one instance acknowledged survives its kill -9. Real daemons, a real PostgreSQL, real nginx.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct ServerInstancesTests {
    @Test func twoInstancesServeTheSameAccounts() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        let (a, b) = (cluster.servers[0], cluster.servers[1])

        // Started at the same moment on an empty database: one instance applied every schema
        // version, the other found them applied.
        let applied = cluster.harnesses.map { harness -> String? in
            guard let line = harness.daemonLog.split(separator: "\n").first(where: { $0.contains("web storage on PostgreSQL") }),
                let start = line.range(of: "migrationsApplied=")
            else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
        let versions = try await TestPostgres.texts(
            "SELECT version::text FROM tresor_schema ORDER BY tresor_schema.version", database: cluster.databaseName)
        #expect(applied.compactMap { $0 }.sorted() == ["", versions.joined(separator: ",")], "\(applied) of \(versions)")

        // Registered on A, signed in on B; A's cookie works on B; a sign-out on B ends it on A.
        let (aliceOnA, alicePassword) = try cluster.registered("alice", on: a)
        var aliceOnB = WebBrowser(b)
        #expect(try aliceOnB.signIn("alice", alicePassword).status == 200)
        cluster.declareSecret(aliceOnB.token ?? "")
        let carried = cluster.browser(aliceOnA, on: b)
        #expect(try carried.get("/api/session").status == 200, "a session started on A is found on B")
        #expect(try carried.delete("/api/session").status == 204)
        #expect(try aliceOnA.get("/api/session").status == 401, "signed out on B: ended on A at its next request")
        #expect(try aliceOnB.get("/api/session").status == 200, "the other session lives on")

        // Shared on A, read on B, unshared on B: 404 on A at once.
        let (bobOnA, _) = try cluster.registered("bob", on: a)
        let marker = "SERVER-NOTE-MARKER-\(UUID().uuidString.prefix(8))"
        let note = try aliceOnB.createNote(title: "\(marker) title", body: "\(marker) body")
        #expect(try aliceOnB.post("/api/notes/\(note)/participants", ["name": "bob"]).status == 201)
        let bobOnB = cluster.browser(bobOnA, on: b)
        #expect(try bobOnB.get("/api/notes/\(note)").json?["body"] as? String == "\(marker) body")
        #expect(try bobOnA.get("/api/notes/\(note)").status == 200)
        #expect(try aliceOnB.delete("/api/notes/\(note)/participants/bob").status == 204)
        #expect(try bobOnA.get("/api/notes/\(note)").status == 404, "unshared on B: gone for bob on A")

        // An attachment of several chunks uploaded on A is byte for byte the same from B.
        let aliceBackOnA = cluster.browser(aliceOnB, on: a)
        var bytes = Data(count: 3 * 1024 * 1024 + 17)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index / 4096) }
        bytes.replaceSubrange(0..<marker.utf8.count, with: Data(marker.utf8))
        let uploaded = try aliceBackOnA.request("POST", "/api/notes/\(note)/attachments?kind=file&name=\(marker).bin", raw: bytes)
        #expect(uploaded.status == 201, "\(uploaded.text)")
        let attachment = try #require(uploaded.json?["id"] as? String)
        #expect(try aliceOnB.get("/api/notes/\(note)/attachments/\(attachment)").body == bytes)

        // Failed sign-ins split over A and B count as one: five free in all, then a wait.
        for (index, server) in [a, b, a, b, a].enumerated() {
            var guesser = WebBrowser(server)
            #expect(try guesser.signIn("alice", "wrong-guess-\(index)").status == 401)
        }
        var late = WebBrowser(b)
        let held = try late.signIn("alice", alicePassword)
        #expect(held.status == 429 && held.code == "throttled", "\(held.status)")

        // A password change on B ends alice's other sessions, on A too, and only the new
        // password signs in anywhere.
        let (carolOnA, carolPassword) = try cluster.registered("carol", on: a)
        var carolOnB = WebBrowser(b)
        #expect(try carolOnB.signIn("carol", carolPassword).status == 200)
        let newPassword = "e2e-carol-new-password-\(UUID().uuidString.prefix(8))"
        cluster.declareSecret(newPassword)
        let changed = try carolOnB.post(
            "/api/account/password",
            [
                "currentPassword": carolPassword, "newPassword": newPassword, "newPasswordAgain": newPassword,
            ])
        #expect(changed.status == 200, "\(changed.text)")
        #expect(try carolOnA.get("/api/session").status == 401, "the session on A ended with the change on B")
        #expect(try carolOnB.get("/api/session").status == 200, "the session that changed it lives on")
        var oldOnA = WebBrowser(a), newOnA = WebBrowser(a)
        #expect(try oldOnA.signIn("carol", carolPassword).status == 401)
        #expect(try newOnA.signIn("carol", newPassword).status == 200)
        cluster.declareSecret(newOnA.token ?? "")

        // A copy of the database reveals no note title, body, attachment name or content.
        let dump = try await TestPostgres.dump(database: cluster.databaseName)
        #expect(dump.contains("alice"), "the dump reads the tables (login names are not sealed)")
        #expect(!dump.contains(marker), "a marker of note content in the clear")
        #expect(!dump.contains(Data(marker.utf8).map { String(format: "%02x", $0) }.joined()), "a marker of attachment bytes in the clear")
        for harness in cluster.harnesses { try harness.expectNoSecretLeaked() }
    }

    /// Twenty registrations of one name at once, spread over both instances: exactly one account.
    @Test func simultaneousRegistrationsOfOneNameMakeExactlyOneAccount() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        let password = "e2e-race-password-\(UUID().uuidString.prefix(8))"
        cluster.declareSecret(password)
        let body = try JSONSerialization.data(withJSONObject: ["name": "zoe", "password": password, "passwordAgain": password])
        let answers = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let server = cluster.servers[index % 2]
            let status =
                (try? server.send(
                    "POST", "/api/accounts",
                    headers: [
                        ("Origin", server.origin), ("Content-Type", "application/json"),
                    ], body: body
                ).status) ?? 0
            answers.withLock { $0.append(status) }
        }
        let statuses = answers.withLock { $0 }
        #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 409 }.count == 19, "the others are told the name is taken: \(statuses)")
        var zoe = WebBrowser(cluster.servers[1])
        #expect(try zoe.signIn("zoe", password).status == 200)
    }

    /// kill -9 of an instance in the middle of a stream of saves: every save it acknowledged is
    /// there on the other, which keeps serving.
    @Test func aKilledInstanceLosesNoAcknowledgedWrite() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        let (aliceOnA, _) = try cluster.registered("alice", on: cluster.servers[0])
        let acknowledged = Mutex<[(id: String, body: String)]>([])
        nonisolated(unsafe) let browser = aliceOnA
        let writer = Thread {
            for index in 0..<10_000 {
                let body = "save \(index) " + String(repeating: "x", count: index % 512)
                guard let answer = try? browser.post("/api/notes", ["title": "note \(index)", "body": body]), answer.status == 201,
                    let id = answer.json?["id"] as? String
                else { return }
                acknowledged.withLock { $0.append((id, body)) }
            }
        }
        writer.start()
        while acknowledged.withLock({ $0.count }) < 20 { usleep(10_000) }
        cluster.harnesses[0].killDaemon()
        while !writer.isFinished { usleep(10_000) }

        let aliceOnB = cluster.browser(aliceOnA, on: cluster.servers[1])
        let saved = acknowledged.withLock { $0 }
        for (id, body) in saved {
            let note = try aliceOnB.get("/api/notes/\(id)")
            #expect(note.status == 200 && note.json?["body"] as? String == body, "acknowledged \(id) by the killed instance")
        }
        #expect(try aliceOnB.createNote(title: "after the kill", body: "B serves").isEmpty == false)
        let listed = try #require(try aliceOnB.get("/api/notes").json?["notes"] as? [[String: Any]])
        #expect(listed.count >= saved.count + 1)
    }

    /// The connection an instance listens for the others' events on is killed: it listens
    /// again, tells its pages to read again, and the others' changes reach them once more.
    @Test func aKilledListenerConnectionResyncs() async throws {
        let cluster = try await ServerInstances(count: 2, configuration: ["webRegistration": "open"])
        let (aliceOnA, _) = try cluster.registered("alice", on: cluster.servers[0])
        let aliceOnB = cluster.browser(aliceOnA, on: cluster.servers[1])
        let stream = try EventStreamReader(aliceOnA)
        #expect(stream.waitFor("live updates", seconds: 10))
        let before = try aliceOnB.createNote(title: "seen live", body: "from B")
        #expect(stream.waitFor(before, seconds: 10), "B's change reaches A's page: \(stream.received)")

        let killed = try await TestPostgres.texts(
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'",
            database: cluster.databaseName)
        #expect(!killed.isEmpty, "the listening connections were found")
        #expect(stream.waitFor("resync", seconds: 30), "A's page is told to read again: \(stream.received)")
        let after = try aliceOnB.createNote(title: "seen after", body: "from B again")
        #expect(stream.waitFor(after, seconds: 10), "B's changes reach A again: \(stream.received)")
    }
}

/// Attachments stream through a server into PostgreSQL and back, a chunk at a time: the
/// instance's memory does not grow with their size.
@Suite(.blocksItsThread, .enabled(if: TestPostgres.shouldRun)) struct ServerMemoryTests {
    @Test func aLargeAttachmentIsNotHeldWholeByTheInstance() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let (alice, _) = try cluster.registered("alice", on: cluster.servers[0])
        let note = try alice.createNote(title: "film", body: "holiday")
        let size = 32 << 20
        var bytes = Data(count: size)
        for index in stride(from: 0, to: size, by: 512) { bytes[index] = UInt8(truncatingIfNeeded: index >> 9) }
        // The first upload warms the instance up (buffers, allocator arenas: 14 MiB here for a
        // 4 MiB upload as for a 32 MiB one); what a size costs shows after it.
        #expect(try alice.request("POST", "/api/notes/\(note)/attachments?kind=file&name=warm-up.bin", raw: bytes.prefix(4 << 20)).status == 201)
        var uploaded: WebResponse?
        let uploadGrowth = try BackupMemoryTests.peakGrowth(of: cluster.harnesses[0]) {
            uploaded = try alice.request("POST", "/api/notes/\(note)/attachments?kind=file&name=film.bin", raw: bytes)
        }
        #expect(uploaded?.status == 201, "\(uploaded?.text ?? "")")
        let attachment = try #require(uploaded?.json?["id"] as? String)
        var downloaded = Data()
        let downloadGrowth = try BackupMemoryTests.peakGrowth(of: cluster.harnesses[0]) {
            downloaded = try alice.get("/api/notes/\(note)/attachments/\(attachment)").body
        }
        #expect(downloaded == bytes)
        print("ServerMemoryTests: peak RSS growth, upload \(uploadGrowth >> 20) MiB, download \(downloadGrowth >> 20) MiB of \(size >> 20) MiB")
        #expect(uploadGrowth < 16 << 20, "the instance's peak grew by \(uploadGrowth >> 20) MiB for a 32 MiB upload")
        #expect(downloadGrowth < 16 << 20, "the instance's peak grew by \(downloadGrowth >> 20) MiB to answer with a 32 MiB attachment")
    }
}

/// Both instances behind Debian's nginx (docs/WEB.md, "Running behind a reverse proxy"): a
/// browser that knows only the proxy's address signs in, writes and reads, whichever instance
/// each request reaches.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun && NginxBalancer.shouldRun)) struct ServerBehindNginxTests {
    @Test func requestsSpreadOverBothInstancesGetOneAnswer() async throws {
        let port = try LoopbackPort.free()
        let cluster = try await ServerInstances(
            count: 2, configuration: ["webRegistration": "open", "webTrustedProxies": ["127.0.0.1"]],
            arguments: ["--public-origin", "http://127.0.0.1:\(port)"])
        let nginx = try NginxBalancer(port: port, upstreams: cluster.servers.map(\.port), directory: cluster.harnesses[0].root)
        let (alice, _) = try cluster.registered("alice", on: nginx.server)
        var written: [String: String] = [:]
        for index in 0..<12 {
            let body = "through the balancer \(index)"
            written[try alice.createNote(title: "note \(index)", body: body)] = body
        }
        for (id, body) in written {
            #expect(try alice.get("/api/notes/\(id)").json?["body"] as? String == body)
        }
        #expect((try alice.get("/api/notes").json?["notes"] as? [[String: Any]])?.count == written.count)
        for harness in cluster.harnesses {
            #expect(harness.daemonLog.contains("web: create succeeded"), "each instance served some of the requests")
        }
        #expect(try nginx.server.send("GET", "/healthz").status == 200)
        #expect(try alice.delete("/api/session").status == 204)
        #expect(try alice.get("/api/session").status == 401, "signed out wherever the next request goes")
        for harness in cluster.harnesses { try harness.expectNoSecretLeaked() }
    }
}
