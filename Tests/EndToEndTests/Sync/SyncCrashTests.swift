import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorSyncProtocol
import TresorTestSupport

/// The sync crash driver (docs/SYNC.md, "Crashes and a stopped server"): a device's sync is cut
/// at one step of a push or a pull of keychain records or notes — the server instance
/// `SIGKILL`ed as the request passes, the device's daemon `SIGKILL`ed as the server's answer
/// comes back, the answer lost, or the daemon `SIGKILL`ed just after a pulled page committed —
/// then what was killed starts again and both devices sync: every item and note is on both
/// devices exactly once, alike, and nothing waits or is kept as a conflict.
///
/// One server instance: the laptop talks to it directly, the phone through a ``CuttingProxy``
/// that cuts at the step; a killed instance starts again on its port.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncCrashTests {
    /// A step of a device's sync: the request that makes it.
    enum Step: String, Sendable {
        case recordsPush = "POST /v1/sync/records"
        case recordsPull = "GET /v1/sync/records"
        case notesPush = "POST /v1/sync/notes/batch"
        case notesPull = "GET /v1/sync/notes"
    }

    /// How the step is cut.
    enum Cut: String, Sendable {
        /// The server instance is `SIGKILL`ed as the step's request passes; it never arrives.
        case serverKilled = "server killed before the request"
        /// The server did the step; the device's daemon is `SIGKILL`ed as the answer comes back.
        case deviceKilledBeforeTheAnswer = "device killed before the answer"
        /// The server did the step; its answer is lost on the way, and the device lives on.
        case answerLost = "answer lost"
        /// The device's daemon is `SIGKILL`ed at its next request, after the step committed.
        case deviceKilledAfterTheStep = "device killed after the step"
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let step: Step
        let cut: Cut
        var testDescription: String { "\(step.rawValue), \(cut.rawValue)" }

        /// The request the proxy cuts at: the step's own, or for a cut after it the device's
        /// next (a records pull is followed by the first note's push).
        var trigger: String {
            guard cut == .deviceKilledAfterTheStep else { return step.rawValue }
            return step == .recordsPull ? Step.notesPush.rawValue : Step.notesPull.rawValue
        }
    }

    static let cases: [Case] =
        [Step.recordsPush, .recordsPull, .notesPush, .notesPull].flatMap { step in
            [Case(step: step, cut: .serverKilled), Case(step: step, cut: .deviceKilledBeforeTheAnswer)]
        } + [
            Case(step: .recordsPush, cut: .answerLost), Case(step: .notesPush, cut: .answerLost),
            Case(step: .recordsPull, cut: .deviceKilledAfterTheStep),
        ]

    /// A server instance with the web account `ada` (`browser` signed in to it), the laptop
    /// joined directly and the phone through the proxy `makeProxy` makes of the server's port,
    /// its instance and the phone.
    static func devices(
        proxy makeProxy: (_ port: Int, _ instance: Harness, _ phone: Harness) throws -> CuttingProxy
    ) async throws -> (cluster: ServerInstances, browser: WebBrowser, laptop: Harness, phone: Harness, proxy: CuttingProxy) {
        // One after the other, not with `async let`: the setup once hung, unexplained, while a
        // child task started the server beside the devices its parent started.
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let laptop = try SyncE2E.device(nil), phone = try SyncE2E.device(nil)
        let server = cluster.servers[0]
        let (browser, password) = try cluster.registered("ada", on: server)
        for device in [laptop, phone] { device.secrets.append(password) }
        let proxy = try makeProxy(server.port, cluster.harnesses[0], phone)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        try SyncE2E.joinApproved(phone, proxy.address, name: "phone", password: password, by: laptop)
        return (cluster, browser, laptop, phone, proxy)
    }

    /// Starts a killed device daemon again and unlocks its keybag.
    static func restart(_ device: Harness) throws {
        #expect(!device.daemonIsRunning)
        try device.startDaemon(extraArguments: ["--no-background-sync"])
        #expect(try device.tresor(["unlock", "--passcode-stdin"], input: SyncE2E.passcode + "\n").succeeded)
    }

    @Test(arguments: Self.cases) func aSyncCutAtThisStepConvergesWithNothingLostOrTwice(_ test: Case) async throws {
        let (cluster, _, laptop, phone, proxy) = try await Self.devices { port, instance, phone in
            nonisolated(unsafe) let (instance, phone) = (instance, phone)
            return try CuttingProxy(
                upstream: port, trigger: test.trigger, dropsAnswer: test.cut == .deviceKilledBeforeTheAnswer || test.cut == .answerLost
            ) {
                switch test.cut {
                case .serverKilled: instance.killDaemon()
                case .deviceKilledBeforeTheAnswer, .deviceKilledAfterTheStep: phone.killDaemon()
                case .answerLost: break
                }
            }
        }
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instance lives

        // The laptop's items and note are on the server; the phone's first sync pushes its own
        // and pulls the laptop's, and is cut at the step.
        for index in 1...2 { try SyncNowTests.add(laptop, service: "laptop\(index).example.com", secret: "e2e-crash-laptop-\(index)") }
        _ = try SyncNotesE2ETests.newNote(laptop, "Laptop note\ne2e-crash-note from the laptop")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 2)
        for index in 1...2 { try SyncNowTests.add(phone, service: "phone\(index).example.com", secret: "e2e-crash-phone-\(index)") }
        for index in 1...2 { _ = try SyncNotesE2ETests.newNote(phone, "Phone note \(index)\ne2e-crash-note from the phone") }
        let cut = try phone.tresor(["sync", "now"])
        #expect(!cut.succeeded && proxy.hasCut, "\(test.testDescription): \(cut.stderr)")
        // Where the cut fell: a push whose answer was lost is on the server, one cut before is not.
        if test.step == .recordsPush || test.step == .notesPush {
            let serverDidIt = test.cut != .serverKilled
            let (table, count) = test.step == .recordsPush ? ("sync_records", serverDidIt ? 4 : 2) : ("notes", serverDidIt ? 3 : 1)
            let held = try await TestPostgres.texts("SELECT count(*)::text FROM \(table)", database: cluster.databaseName)
            #expect(held == ["\(count)"], "\(table), \(test.testDescription)")
        }

        let port = cluster.servers[0].port
        switch test.cut {
        case .serverKilled:
            _ = try cluster.harnesses[0].startWebDaemon(
                passcode: ServerInstances.passcode, extraArguments: ["--database", cluster.databaseURL, "--server-key-file", cluster.keyFile.path],
                port: port)
        case .deviceKilledBeforeTheAnswer, .deviceKilledAfterTheStep: try Self.restart(phone)
        case .answerLost: break
        }
        proxy.relay(to: port)
        let resumed = try SyncNowTests.syncNow(phone)
        if test.cut == .deviceKilledAfterTheStep {
            #expect(resumed.pushed == 0 && resumed.applied == 0, "the records pull committed before the kill: \(resumed)")
        }
        _ = try SyncNowTests.syncNow(laptop)
        let last = try SyncNowTests.syncNow(phone)
        #expect(last.pushed == 0 && last.applied == 0 && last.notes?.sent == 0 && last.notes?.applied == 0, "\(last)")

        let expected = SyncE2E.Contents(
            items: [
                "laptop1.example.com: e2e-crash-laptop-1", "laptop2.example.com: e2e-crash-laptop-2",
                "phone1.example.com: e2e-crash-phone-1", "phone2.example.com: e2e-crash-phone-2",
            ],
            notes: [
                "Laptop note\ne2e-crash-note from the laptop", "Phone note 1\ne2e-crash-note from the phone",
                "Phone note 2\ne2e-crash-note from the phone",
            ])
        for (device, name) in [(laptop, "laptop"), (phone, "phone")] {
            let contents = try SyncE2E.contents(of: device)
            #expect(contents == expected, "\(name), \(test.testDescription): \(contents)")
            let status = try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"])
            #expect(
                status.counters?.changesWaiting == 0 && status.counters?.conflictsKept == 0 && status.notesWaiting == 0,
                "\(name), \(test.testDescription): \(String(describing: status.counters)), notes waiting \(String(describing: status.notesWaiting))")
            #expect(!device.daemonLog.contains("e2e-crash-"))
        }
    }

    /// A notes pull is applied page by page, each with its cursor in one transaction: the phone's
    /// daemon `SIGKILL`ed as it asks for the second page finds the first page applied after the
    /// restart, and its next sync applies only the rest.
    @Test func aDeviceKilledBetweenTwoNotesPagesResumesAfterTheFirst() async throws {
        let (cluster, browser, laptop, phone, proxy) = try await Self.devices { port, _, phone in
            nonisolated(unsafe) let phone = phone
            return try CuttingProxy(upstream: port, trigger: Step.notesPull.rawValue, occurrence: 2) { phone.killDaemon() }
        }
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instance lives
        // A device's page holds 500 notes (`SyncLimits.notesPageEntries`): 501 made in the web client take two.
        let count = SyncLimits.notesPageEntries + 1
        for index in 1...count { _ = try browser.createNote(title: "Web note \(index)", body: "e2e-crash-web-note \(index)") }
        let cut = try phone.tresor(["sync", "now"])
        #expect(!cut.succeeded && proxy.hasCut, "\(cut.stderr)")
        try Self.restart(phone)
        proxy.relay(to: cluster.servers[0].port)
        #expect(try SyncNowTests.syncNow(phone).notes?.applied == 1, "the first page of 500 was applied before the kill")
        #expect(try SyncNowTests.syncNow(laptop).notes?.applied == count)
        let onPhone = try phone.json([NoteSummary].self, ["note", "list"]).map(\.title).sorted()
        #expect(onPhone.count == count && Set(onPhone).count == count, "\(onPhone.count) notes")
        #expect(try laptop.json([NoteSummary].self, ["note", "list"]).map(\.title).sorted() == onPhone)
    }

    /// The server makes the note a device created and records its origin in one transaction
    /// (`SyncedNoteCreationStore.createSyncedNote`). An instance `SIGKILL`ed in that transaction
    /// — held there by a lock on `sync_note_origins` that `psql` takes, which lets the origin's
    /// lookup through and stops its insert — leaves no note at all, and the device's retried
    /// creation makes the note once.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/psql"), "needs psql, which Debian's postgresql brings"))
    func aServerKilledWhileItCreatesANoteLeavesNoneAndTheRetryMakesItOnce() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instance lives
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        nonisolated(unsafe) let laptop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        _ = try SyncNotesE2ETests.newNote(laptop, "Once\ne2e-crash-note made once")

        let lock = Process()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        lock.arguments = ["-X", "-q", "-t", "-v", "ON_ERROR_STOP=1", cluster.databaseURL]
        let (input, output) = (Pipe(), Pipe())
        (lock.standardInput, lock.standardOutput) = (input, output)
        try lock.run()
        // Every wait on psql below ends: a psql still running after two minutes is killed.
        let psqlWatchdog = Watchdog(lock, after: 120)
        input.fileHandleForWriting.write(Data("BEGIN;\nLOCK TABLE sync_note_origins IN EXCLUSIVE MODE;\nSELECT 'locked';\n".utf8))
        var read = ""
        while !read.contains("locked") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            read += String(decoding: chunk, as: UTF8.self)
        }
        #expect(read.contains("locked"), "psql: \(read)")

        let syncEnded = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var cut: Harness.Result?
        Thread.detachNewThread {
            cut = try? laptop.tresor(["sync", "now"])
            syncEnded.signal()
        }
        // The creation waits for the lock on the origins, inside its transaction.
        let waiting = "SELECT count(*)::text FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
        let deadline = Date().addingTimeInterval(30)
        while try await TestPostgres.texts(waiting, database: cluster.databaseName) == ["0"], Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await TestPostgres.texts(waiting, database: cluster.databaseName) != ["0"], "the creation never waited for the origins' lock")
        cluster.harnesses[0].killDaemon()
        input.fileHandleForWriting.write(Data("ROLLBACK;\n".utf8))
        try input.fileHandleForWriting.close()
        lock.waitUntilEnded()
        #expect(!psqlWatchdog.fired, "psql hung")
        #expect(syncEnded.wait(timeout: .now() + 120) == .success, "the cut sync never ended")
        #expect(cut?.succeeded == false, "\(cut?.stderr ?? "")")
        #expect(try await TestPostgres.texts("SELECT count(*)::text FROM sync_note_origins", database: cluster.databaseName) == ["0"])
        #expect(
            try await TestPostgres.texts("SELECT count(*)::text FROM notes", database: cluster.databaseName) == ["0"], "a note without its origin")

        _ = try cluster.harnesses[0].startWebDaemon(
            passcode: ServerInstances.passcode, extraArguments: ["--database", cluster.databaseURL, "--server-key-file", cluster.keyFile.path],
            port: server.port)
        _ = try SyncNowTests.syncNow(laptop)
        let notes = try await TestPostgres.texts("SELECT count(*)::text FROM notes", database: cluster.databaseName)
        let onLaptop = try SyncE2E.contents(of: laptop).notes
        #expect(notes == ["1"], "notes on the server")
        #expect(onLaptop == ["Once\ne2e-crash-note made once"], "\(onLaptop)")
    }
}
