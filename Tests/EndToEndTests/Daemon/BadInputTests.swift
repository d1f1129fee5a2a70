import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Malformed and oversized requests, a tampered keybag, a missing device key: a clear error,
/// the daemon keeps running, and nothing on disk is lost or rewritten.
@Suite(.blocksItsThread, .serialized) struct BadInputTests {
    @Test func malformedAndOversizedRequestsGetClearErrors() throws {
        let harness = try Harness.initialized(passcode: "e2e-badinput-passcode")
        #expect(try harness.tresor(["lock"]).succeeded)
        let before = try harness.homeSnapshot()

        let cases: [(String, String, Data?, Int, APIError.Code)] = [
            ("POST", "/v1/unlock", Data("not json at all".utf8), 400, .param),
            ("POST", "/v1/unlock", Data(#"{"passcode": 42}"#.utf8), 400, .param),
            ("POST", "/v1/unlock", Data(#"{"passcode": ""}"#.utf8), 400, .param),
            ("POST", "/v1/unlock", Data(#"{}"#.utf8), 401, .passcodeRequired),
            ("POST", "/v1/unlock", Data(repeating: 0x41, count: 1_100_000), 413, .requestTooLarge),
            ("POST", "/v1/unlock", Data(("{\"passcode\": \"" + String(repeating: "x", count: 2000) + "\"}").utf8), 400, .param),
            ("POST", "/v1/passcode/change", Data(#"{"current": null}"#.utf8), 400, .param),
            ("POST", "/v1/lock", Data(#"{"keychain": 42}"#.utf8), 400, .param),
            ("POST", "/v1/unlock", Data(#"{"passcode": "x", "keychain": "no-such"}"#.utf8), 404, .noSuchKeychain),
            ("GET", "/v1/no-such-route", nil, 404, .notFound),
            ("GET", "/v2/status", nil, 404, .notFound),
            ("DELETE", "/v1/holds/unknown", nil, 404, .notFound),
        ]
        for (method, path, body, status, code) in cases {
            let (answered, text) = try harness.curl(method, path, body: body)
            #expect(answered == status, "\(method) \(path): \(text)")
            #expect(apiErrorCode(in: text) == code, "\(method) \(path): \(text)")
        }
        // The daemon still serves, the keybag is as it was, and no file changed.
        #expect(harness.daemonIsRunning)
        let status = try harness.status()
        #expect(status.keybag == .locked)
        #expect(status.failedAttempts == 0, "malformed requests are not passcode attempts")
        let after = try harness.homeSnapshot()
        #expect(after == before, "changed: \(Set(after.keys).union(before.keys).filter { after[$0] != before[$0] }.sorted())")
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: "e2e-badinput-passcode\n").succeeded)
        try harness.expectNoSecretLeaked()
    }

    @Test func badKeychainRequestsGetClearErrorsAndTouchNothing() throws {
        let harness = try Harness.initialized(passcode: "e2e-badkeychain-passcode")
        #expect(
            try harness.tresor(["item", "add", "--service", "keep", "--account", "me", "--readable-by-scripts", "--secret-stdin"], input: "kept\n")
                .succeeded)

        func add(_ json: String) throws -> (Int, String) {
            try harness.curl("POST", "/v1/items/add", body: Data(json.utf8))
        }
        // curl is not a registered application: the keychain refuses it outright.
        let (status, text) = try add(#"{"itemClass": "genp", "attributes": {"service": "s"}, "secret": "eA=="}"#)
        #expect(status == 403)
        #expect(apiErrorCode(in: text) == .missingEntitlement)

        // Through the CLI (the keychain-access application):
        let unknownClass = try harness.tresor(["item", "add", "--class", "nope", "--secret-stdin"], input: "x\n")
        #expect(!unknownClass.succeeded)
        let wrongClassAttribute = try harness.json(ErrorResponse.self, ["item", "add", "--server", "example.com", "--secret-stdin"], input: "x\n")
        #expect(wrongClassAttribute.error.code == .param)
        #expect(wrongClassAttribute.error.message.contains("server does not apply to generic password"))
        let huge = String(repeating: "s", count: 256 * 1024 + 1)
        let oversized = try harness.json(ErrorResponse.self, ["item", "add", "--service", "big", "--secret-stdin"], input: huge)
        #expect(oversized.error.code == .param)
        #expect(oversized.error.message.contains("an item holds at most 256 KB"), "\(oversized.error.message)")
        let nothing = try harness.json(ErrorResponse.self, ["item", "get", "--service", "no-such-service"])
        #expect(nothing.error.code == .itemNotFound)
        #expect(try harness.tresor(["item", "get", "--service", "keep", "--account", "me"]).stdout == "kept")
        #expect(harness.daemonIsRunning)
        try harness.expectNoSecretLeaked()
    }

    /// A name or path that is empty, or names a directory or a FIFO, where a command wants an id,
    /// an executable or a file to read, is said as such — not "no such route", not an internal
    /// error, and a FIFO never holds a daemon thread, or the CLI, waiting for a writer.
    @Test func emptyIdsAndExecutablesThatAreNoFilesAreSaidAsSuch() throws {
        let harness = try Harness.initialized(passcode: "e2e-emptyids-passcode")
        for (command, said) in [
            (["sync", "approve", ""], "the join request's id is empty"), (["sync", "approve", "", "--deny"], "the join request's id is empty"),
            (["sync", "remove", ""], "the device's name or id is empty"),
            (["sync", "conflicts", "restore", ""], "the kept version's id is empty"),
            (["secret-service", "trust", "remove", ""], "name an executable, or all"),
        ] {
            let passcode = command.first == "sync" ? ["--passcode-stdin"] : []
            let answer = try harness.json(ErrorResponse.self, command + passcode, input: "e2e-emptyids-passcode\n")
            #expect(answer.error.code == .param && answer.error.message.contains(said), "\(command): \(answer.error.message)")
        }
        let fifo = harness.paths.home.deletingLastPathComponent().appendingPathComponent("fifo-\(UUID().uuidString)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        for path in [FileManager.default.temporaryDirectory.path, fifo] {
            let answer = try harness.json(ErrorResponse.self, ["secret-service", "trust", "remove", path])
            #expect(answer.error.code == .param && answer.error.message.contains("is not a file"), "\(path): \(answer.error.message)")
        }
        // A backup or an Apple Notes database named by a FIFO: said at once, by the daemon that
        // reads the backup and by the reader of the database.
        for (command, input) in [
            (["backup", "verify", fifo, "--passphrase-stdin"], "some backup passphrase\n"),
            (["backup", "restore", fifo, "--passcode-stdin"], "e2e-emptyids-passcode\nsome backup passphrase\n"),
            (["import", "apple-notes", fifo], nil),
        ] {
            let result = try harness.tresor(command, input: input)
            #expect(!result.succeeded && result.stderr.contains("not a regular file"), "\(command): \(result.stderr)")
        }
        #expect(harness.daemonIsRunning)
    }

    /// A hold's reason is shown in `tresor status` and the log: 1 to 200 characters after
    /// trimming, no control character (no forged line, no terminal escape).
    @Test func holdReasonsStopAtTheirLimit() throws {
        let harness = try Harness.initialized(passcode: "e2e-holdlimits-passcode")
        func hold(_ reason: String) throws -> (status: Int, body: String) {
            try harness.curl("POST", "/v1/holds", body: try JSONEncoder().encode(["reason": reason]))
        }
        let longest = String(repeating: "é", count: 200)
        let taken = try hold("  " + longest + "\n")
        #expect(taken.status == 200, "\(taken.body)")
        #expect(try JSONDecoder().decode(Hold.self, from: Data(taken.body.utf8)).reason == longest)
        for refused in [
            longest + "x", "", " \n ", "line one\nline two", "bell\u{7}", "clear \u{1B}[2J", "next line\u{85}here", "line\u{2028}separator",
            "reversed\u{202E}txt.exe",
        ] {
            let answer = try hold(refused)
            #expect(answer.status == 400, "\(refused.debugDescription): \(answer.body)")
            #expect(apiErrorCode(in: answer.body) == .param, "\(refused.debugDescription): \(answer.body)")
        }
        #expect(harness.daemonIsRunning)
    }

    @Test func aTamperedKeybagIsReportedAndLeftAlone() throws {
        let harness = try Harness.initialized(passcode: "e2e-tamper-passcode")
        harness.stopDaemon()
        var keybag = try Data(contentsOf: harness.paths.keybag)
        keybag[keybag.count - 10] ^= 0x20
        try keybag.write(to: harness.paths.keybag)

        try harness.startDaemon()
        let status = try harness.status()
        #expect(status.keybag == .damaged)
        #expect(status.problem?.contains("keybag is damaged or was altered") == true, "\(status.problem ?? "")")
        let unlock = try harness.json(ErrorResponse.self, ["unlock", "--passcode-stdin"], input: "e2e-tamper-passcode\n")
        #expect(unlock.error.code == .keybagDamaged)
        let again = try harness.tresor(["init", "--passcode-stdin"], input: "another\n")
        #expect(!again.succeeded, "init must not overwrite a damaged keybag")
        #expect(try Data(contentsOf: harness.paths.keybag) == keybag)
        #expect(harness.daemonIsRunning)
        try harness.expectNoSecretLeaked()
    }

    @Test func aMissingDeviceKeyIsNamed() throws {
        let harness = try Harness()
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--no-passcode"]).succeeded)
        harness.stopDaemon()
        let keybag = try Data(contentsOf: harness.paths.keybag)
        try FileManager.default.removeItem(at: harness.paths.deviceKey)
        try harness.startDaemon()
        let status = try harness.status()
        #expect(status.keybag == .damaged)
        #expect(status.problem?.contains("device key") == true)
        // Where it was, and nothing claimed of a passcode the daemon cannot read.
        #expect(status.problem?.contains(harness.paths.deviceKey.path) == true, "\(status.problem ?? "")")
        let shown = try harness.tresor(["status"]).stdout
        #expect(shown.contains("Keybag:     damaged\n"), "\(shown)")
        let doctor = try harness.tresor(["doctor"]).stdout
        #expect(doctor.contains("this home has a keybag but no device key") && !doctor.contains("run tresor init"), "\(doctor)")
        #expect(try harness.tresor(["unlock"]).stderr.contains("device key"))
        #expect(!FileManager.default.fileExists(atPath: harness.paths.deviceKey.path))
        #expect(try Data(contentsOf: harness.paths.keybag) == keybag)
    }

    @Test(arguments: [
        (#"{"secretServiceRememberHours": 30}"#, "secretServiceRememberHours must be from 1 to 24"),
        (#"{"socketIdleSeconds": 0}"#, "socketIdleSeconds must be from 1 to 3600"),
        // A misspelt key would leave its setting untaken, in silence.
        (#"{"autoLockSeconds": 60, "autoLockMinutes": 5}"#, #"has no setting "autoLockMinutes": did you mean "autoLockSeconds"?"#),
        (#"{"lockwithscreen": false}"#, #"has no setting "lockwithscreen": did you mean "lockWithScreen"?"#),
        (#"{"webport": 8080}"#, #"has no setting "webport": did you mean "webPort"?"#),
        (#"{"colour": "blue"}"#, #"has no setting "colour" (docs/FORMAT.md lists the settings)"#),
    ])
    func aSettingOutOfItsRangeOrMisspeltStopsTheDaemonSayingWhich(configuration: String, said: String) throws {
        let harness = try Harness(configuration: configuration)
        let refused = try harness.tresord([])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains(said), "\(refused.stderr)")
    }

    @Test func aSecondDaemonForTheSameHomeRefusesToStart() throws {
        let harness = try Harness()
        try harness.startDaemon()
        let second = try harness.tresord([])
        #expect(second.status != 0)
        #expect(second.stderr.contains("already running"))
        // And how to go on: the options belong in config.json, then a restart.
        #expect(second.stderr.contains("config.json") && second.stderr.contains("tresor daemon restart"), "\(second.stderr)")
        #expect(try harness.status().keybag == .notInitialized, "the first daemon still answers")
    }
}
