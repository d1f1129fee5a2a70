import Foundation
import Testing
import TresorKeybag
import TresorProtocol
import TresorSync
import TresorTestSupport

/// Devices joining a sync account (docs/SYNC.md, "Devices"): a real server instance on a
/// throwaway PostgreSQL, device homes each with its own `tresord`, driven through `tresor sync`.
@Suite(.blocksItsThread, .serialized, .enabled(if: TestPostgres.shouldRun)) struct SyncDevicesE2ETests {
    @Test func aSecondDeviceJoinsWhenApprovedWithTheSameWordsAndARemovedOneIsRefused() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), tablet = try SyncE2E.device(password)

        let created = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        let recoveryKey = try #require(created.recoveryKey)
        #expect(created.state == .trusted && created.requestID == nil)
        // Shown once: in no file of the home and not in the daemon's log, in any spelling.
        for spelling in [recoveryKey, recoveryKey.replacingOccurrences(of: "-", with: ""), recoveryKey.lowercased()] {
            for (url, data) in try laptop.homeFiles() {
                #expect(data.range(of: Data(spelling.utf8)) == nil, "the recovery key is in \(url.lastPathComponent)")
            }
            #expect(!laptop.daemonLog.contains(spelling))
        }
        let dump = try await TestPostgres.dump(database: cluster.databaseName)
        #expect(!dump.contains(recoveryKey.replacingOccurrences(of: "-", with: "")))

        let asked = try SyncE2E.join(phone, server, name: "phone", password: password)
        #expect(asked.state == .waiting)
        let requestID = try #require(asked.requestID)
        let phoneWords = try #require(asked.words)
        #expect(phoneWords.count == 6)

        let waiting = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve"]).requests
        #expect(waiting.map(\.requestID) == [requestID])
        #expect(waiting.first?.words == phoneWords, "both devices show the same words")
        #expect(waiting.first?.deviceName == "phone")

        // A wrong passcode approves nothing.
        let wrong = try laptop.tresor(["sync", "approve", requestID, "--passcode-stdin"], input: "not-the-passcode\n")
        #expect(!wrong.succeeded)
        #expect(try SyncE2E.sync(phone, SyncJoinAnswer.self, ["join", server.origin, "--account", "ada", "--no-wait"]).state == .waiting)

        // Named by the start of its id, as the README shows it.
        let approved = try SyncE2E.sync(
            laptop, SyncRequestsAnswer.self, ["approve", String(requestID.prefix(4)), "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(approved.requests.isEmpty)
        #expect(try SyncE2E.sync(phone, SyncJoinAnswer.self, ["join", server.origin, "--account", "ada", "--no-wait"]).state == .trusted)
        for device in [laptop, phone] {
            let names = try SyncE2E.sync(device, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name)
            #expect(names == ["laptop", "phone"])
        }

        // A denied request changes nothing.
        let before = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        let denied = try #require(try SyncE2E.join(tablet, server, name: "tablet", password: password).requestID)
        #expect(try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve", String(denied.prefix(6)), "--deny"]).requests.isEmpty)
        #expect(try SyncE2E.sync(tablet, SyncJoinAnswer.self, ["join", server.origin, "--account", "ada", "--no-wait"]).state == .removed)
        #expect(try SyncE2E.sync(laptop, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name) == ["laptop", "phone"])
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).listVersion == before.listVersion)

        // Removal needs the passcode again, as approving does: without it, or with a wrong one,
        // the phone stays.
        for (arguments, input) in [([], ""), (["--passcode-stdin"], "not-the-passcode\n")] {
            let refused = try laptop.tresor(["sync", "remove", "phone"] + arguments, input: input)
            #expect(!refused.succeeded && refused.stderr.contains("passcode"), "\(refused.stdout) \(refused.stderr)")
        }
        #expect(try SyncE2E.sync(laptop, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name) == ["laptop", "phone"])
        // Removal: the server refuses the phone, which is told to leave; the key rolled to epoch 2,
        // shared to the laptop and the recovery identity, not to the phone.
        #expect(
            try SyncE2E.sync(laptop, SyncDeviceInfo.self, ["remove", "phone", "--passcode-stdin"], input: SyncE2E.passcode + "\n").deviceID
                == asked.deviceID)
        let refused = try phone.tresor(["sync", "devices"])
        #expect(!refused.succeeded && refused.stderr.contains("tresor sync leave"), "\(refused.stderr)")
        let status = try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"])
        #expect(status.epoch == 2 && status.trustedDevices.map(\.name) == ["laptop"])
        let phoneID = asked.deviceID
        let envelopes = try await TestPostgres.texts(
            "SELECT device_id || ':' || epoch FROM sync_key_envelopes ORDER BY epoch, device_id", database: cluster.databaseName)
        #expect(envelopes.contains("\(created.deviceID):2") && !envelopes.contains("\(phoneID):2"), "\(envelopes)")
        #expect(
            try await TestPostgres.texts("SELECT epoch::text FROM sync_recovery_envelopes ORDER BY epoch", database: cluster.databaseName) == [
                "1", "2",
            ])

        // The keys each device holds, opened from its home as its daemon does: the phone holds
        // epoch 1 only, and opens none of epoch 2's envelopes; the laptop opens its own.
        let circle = try await Self.latestList(cluster)
        let epochTwo = try await Self.envelopes(cluster, epoch: 2)
        #expect(epochTwo.count == 2, "the laptop's and the recovery identity's")
        let (phoneDevice, phoneKeys) = try Self.keys(of: phone)
        #expect(phoneKeys.epochs == [1])
        for share in epochTwo {
            #expect(throws: SyncError.self) { try share.open(as: phoneDevice, trusting: circle) }
        }
        let (laptopDevice, laptopKeys) = try Self.keys(of: laptop)
        #expect(laptopKeys.epochs == [1, 2])
        let laptopShare = try #require(epochTwo.first { $0.recipientID == laptopDevice.deviceID })
        #expect(try laptopShare.open(as: laptopDevice, trusting: circle).epoch == 2, "the positive control: the laptop opens it")

        // Leaving keeps the data and forgets the account.
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["leave"]).joined == false)
    }

    /// A device's sync identity and circle keys, opened with its keybag from its home.
    static func keys(of device: Harness) throws -> (LocalDevice, CircleKeyring) {
        struct Stored: Decodable {
            let account: String
            let keyring: Data
        }
        let keybag = try Keybag.open(paths: device.paths)
        try keybag.unlock(passcode: try Passcode(SyncE2E.passcode))
        let identity = try #require(try LocalDevice.load(from: device.paths.syncDeviceIdentity, keybag: keybag))
        let stored = try JSONDecoder().decode(Stored.self, from: Data(contentsOf: device.paths.home.appendingPathComponent("sync-account")))
        return (identity, try CircleKeyring(sealed: stored.keyring, account: stored.account, keybag: keybag))
    }

    /// The device list the server holds, as a device reads it.
    static func latestList(_ cluster: ServerInstances) async throws -> TrustedDeviceList {
        let blobs = try await TestPostgres.texts("SELECT encode(device_list, 'base64') FROM sync_circles", database: cluster.databaseName)
        let blob = try #require(blobs.first.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) })
        return try #require(try CircleHistory(encoded: blob).latest).list
    }

    /// The key envelopes of `epoch` the server holds: the devices' and the recovery identity's.
    static func envelopes(_ cluster: ServerInstances, epoch: Int) async throws -> [CircleKeyShare] {
        let texts = try await TestPostgres.texts(
            """
            SELECT encode(envelope, 'base64') FROM sync_key_envelopes WHERE epoch = \(epoch)
            UNION ALL SELECT encode(envelope, 'base64') FROM sync_recovery_envelopes WHERE epoch = \(epoch)
            """, database: cluster.databaseName)
        return try texts.map { try CircleKeyShare(encoded: try #require(Data(base64Encoded: $0, options: .ignoreUnknownCharacters))) }
    }

    /// Account ada on a server; the laptop made its circle, the desktop has joined nothing yet.
    static func laptopInACircleAndADesktop() async throws -> (
        cluster: ServerInstances, server: WebServerAddress, password: String, laptop: Harness, desktop: Harness
    ) {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), desktop = try SyncE2E.device(password)
        _ = try SyncE2E.join(laptop, server, name: "laptop", password: password)
        return (cluster, server, password, laptop, desktop)
    }

    @Test func aJoiningDeviceShowsTheWordsWhileItWaitsUntilATrustedDeviceApprovesIt() async throws {
        let (cluster, server, password, laptop, desktop) = try await Self.laptopInACircleAndADesktop()
        defer { withExtendedLifetime(cluster) {} }  // the server runs as long as the instances live
        let join = ["sync", "join", server.origin, "--account", "ada", "--password-stdin", "--device-name", "desktop"]

        // `tresor sync join` without --no-wait, as a user runs it — its output a pipe, as under
        // `ssh host tresor …` or `| tee`: the words must be there to compare while it waits.
        let first = try JoiningDevice(desktop, join, input: password + "\n")
        var waiting: [SyncPendingRequest] = []
        try await waitUntil("the laptop lists the desktop's request") {
            waiting = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve"]).requests
            return !waiting.isEmpty
        }
        let request = try #require(waiting.first)
        let words = request.words.joined(separator: " ")
        try await waitUntil("the waiting device shows the words the laptop shows", seconds: 20) { first.printed.contains(words) }
        #expect(first.isRunning, "the joining device waits for the answer")
        // The user gives up waiting (Ctrl-C) and runs the join again: it shows the same words.
        let printedFirst = first.interrupt()
        #expect(!printedFirst.contains(password))

        let again = try JoiningDevice(desktop, join, input: "")
        try await waitUntil("the join run again shows the words", seconds: 20) { again.printed.contains(words) }
        #expect(again.printed.contains(request.requestID), "\(again.printed)")
        _ = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve", request.requestID, "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        let (status, printed) = again.ended(within: 30)
        #expect(status == 0, "\(printed)")
        #expect(printed.contains("Approved"), "\(printed)")
        #expect(!printed.contains(password))
        #expect(try SyncE2E.sync(desktop, SyncDevicesAnswer.self, ["devices"]).devices.map(\.name) == ["laptop", "desktop"])
    }

    @Test func theRecoveryKeyLetsADeviceInWhenNoTrustedDeviceIsLeft() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password), desktop = try SyncE2E.device(password)
        let recoveryKey = try #require(try SyncE2E.join(laptop, server, name: "laptop", password: password).recoveryKey)
        // The phone joins, removes the laptop that made the circle (epoch 2), then leaves: no
        // trusted device is left, and epoch 1's key was shared by a device no longer in the list.
        try SyncE2E.joinApproved(phone, server, name: "phone", password: password, by: laptop)
        _ = try SyncE2E.sync(phone, SyncDeviceInfo.self, ["remove", "laptop", "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["leave"]).joined == false)

        // A mistyped key (its last character changed) is told apart and changes nothing.
        let mistyped = String(recoveryKey.dropLast()) + (recoveryKey.last == "A" ? "B" : "A")
        let typo = try desktop.tresor(
            ["sync", "recover", server.origin, "--account", "ada", "--password-stdin", "--recovery-key-stdin"],
            input: password + "\n" + mistyped + "\n")
        #expect(!typo.succeeded && typo.stderr.contains("recovery key"), "\(typo.stderr)")
        #expect(try SyncE2E.sync(desktop, SyncStatusAnswer.self, ["status"]).joined == false)

        let recovered = try SyncE2E.sync(
            desktop, SyncJoinAnswer.self,
            ["recover", server.origin, "--account", "ada", "--password-stdin", "--recovery-key-stdin", "--device-name", "desktop"],
            input: password + "\n" + recoveryKey + "\n")
        #expect(recovered.state == .trusted)
        let status = try SyncE2E.sync(desktop, SyncStatusAnswer.self, ["status"])
        #expect(status.state == .trusted && status.listVersion == 4 && status.epoch == 2, "v1 laptop, v2 + phone, v3 − laptop, v4 + desktop")
        #expect(status.trustedDevices.map(\.name) == ["phone", "desktop"], "the phone left without a list of its own")
        #expect(try Self.keys(of: desktop).1.epochs == [1, 2], "it reads what the circle wrote in every epoch")
    }

    /// A recovery key that is well formed but another circle's is told apart from a refusal of
    /// the server, and leaves nothing behind: the join request the attempt made is withdrawn, so
    /// no trusted device can approve a member that no home holds.
    @Test func anotherCirclesRecoveryKeyLeavesNoJoinRequestToApprove() async throws {
        let (cluster, server, password, laptop, desktop) = try await Self.laptopInACircleAndADesktop()

        let wrong = try desktop.tresor(
            ["sync", "recover", server.origin, "--account", "ada", "--password-stdin", "--recovery-key-stdin", "--device-name", "desktop"],
            input: password + "\n" + RecoveryKey.generate().text + "\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("not the recovery key of sync account ada"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("sync server sent"), "the server sent nothing wrong: \(wrong.stderr)")
        #expect(try SyncE2E.sync(desktop, SyncStatusAnswer.self, ["status"]).joined == false)
        #expect(try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve"]).requests.isEmpty, "no join request waits")
        #expect(
            try await TestPostgres.texts("SELECT state FROM sync_devices WHERE name = 'desktop'", database: cluster.databaseName) == ["removed"])
    }

    @Test func aWrongPasswordOrALockedKeybagJoinsNothing() async throws {
        let cluster = try await ServerInstances(count: 1, configuration: ["webRegistration": "open"])
        let server = cluster.servers[0]
        let (_, password) = try cluster.registered("ada", on: server)
        let laptop = try SyncE2E.device(password)
        let before = try laptop.homeSnapshot()

        let wrong = try laptop.tresor(["sync", "join", server.origin, "--account", "ada", "--password-stdin"], input: "not-\(password)\n")
        #expect(!wrong.succeeded && wrong.stderr.contains("wrong name or password"), "\(wrong.stderr)")
        #expect(try laptop.homeSnapshot() == before, "nothing written in the home")
        #expect(try await TestPostgres.texts("SELECT id FROM sync_devices", database: cluster.databaseName).isEmpty, "nor on the server")

        #expect(try laptop.tresor(["lock"]).succeeded)
        let locked = try laptop.tresor(["sync", "join", server.origin, "--account", "ada", "--password-stdin"], input: password + "\n")
        #expect(!locked.succeeded && locked.stderr.contains("keybag is locked"), "\(locked.stderr)")
        #expect(try await TestPostgres.texts("SELECT id FROM sync_devices", database: cluster.databaseName).isEmpty)
        #expect(try SyncE2E.sync(laptop, SyncStatusAnswer.self, ["status"]).joined == false)
    }

    @Test func aServerAnsweringGarbageIsAClearErrorAndChangesNothing() throws {
        let password = "e2e-garbage-password-\(UUID().uuidString.prefix(8))"
        let device = try SyncE2E.device(password)
        let port = try LoopbackPort.free()
        // Python's file server answers every POST with an HTML page: not the relay's JSON.
        let garbage = Process()
        garbage.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        garbage.arguments = ["-m", "http.server", "--bind", "127.0.0.1", "--directory", device.root.path, "\(port)"]
        garbage.standardOutput = FileHandle.nullDevice
        garbage.standardError = FileHandle.nullDevice
        try garbage.run()
        defer { kill(garbage.processIdentifier, SIGKILL) }  // SIGTERM is blocked in the test's children.
        for _ in 0..<100 where (try? WebServerAddress(port: port).send("GET", "/")) == nil { usleep(50_000) }

        let before = try device.homeSnapshot()
        let answer = try device.tresor(
            ["sync", "join", "http://127.0.0.1:\(port)", "--account", "ada", "--password-stdin", "--no-wait"], input: password + "\n")
        #expect(!answer.succeeded)
        #expect(answer.stderr.contains("not understood") && answer.stderr.contains("nothing of it was applied"), "\(answer.stderr)")
        #expect(try SyncE2E.sync(device, SyncStatusAnswer.self, ["status"]).joined == false)
        #expect(try device.homeSnapshot() == before, "nothing changed in the home")

        // Plain http:// to another host is refused before anything is sent.
        let remote = try device.tresor(["sync", "join", "http://tresor.example.org", "--account", "ada", "--password-stdin"], input: password + "\n")
        #expect(!remote.succeeded && remote.stderr.contains("loopback"), "\(remote.stderr)")
    }
}

/// A `tresor sync join` that waits for its approval, its standard output and error one pipe
/// read as they come — what a user sees of it while it waits.
private final class JoiningDevice {
    private let process = Process()
    private let chunks = EventLog()
    private let readToTheEnd = DispatchSemaphore(value: 0)

    init(_ device: Harness, _ arguments: [String], input: String) throws {
        process.executableURL = device.binaries.appendingPathComponent("tresor")
        process.arguments = arguments
        process.environment = device.environment
        let stdin = Pipe(), output = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (stdin, output, output)
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let reading = output.fileHandleForReading
        Thread.detachNewThread { [chunks, readToTheEnd] in
            while case let chunk = reading.availableData, !chunk.isEmpty { chunks.append(String(decoding: chunk, as: UTF8.self)) }
            readToTheEnd.signal()
        }
    }

    /// What it printed so far.
    var printed: String { chunks.entries.joined() }
    var isRunning: Bool { process.isRunning }

    /// Stops it as Ctrl-C does.
    /// - Returns: what it printed.
    func interrupt() -> String {
        kill(process.processIdentifier, SIGINT)
        return ended(within: 10).printed
    }

    /// Waits for its end, killing it after `seconds`.
    /// - Returns: its exit status and what it printed.
    func ended(within seconds: TimeInterval) -> (status: Int32, printed: String) {
        if !process.waitUntilEnded(timeout: seconds) { kill(process.processIdentifier, SIGKILL) }
        let status = process.waitForStatus()
        _ = readToTheEnd.wait(timeout: .now() + 10)
        return (status, printed)
    }
}
