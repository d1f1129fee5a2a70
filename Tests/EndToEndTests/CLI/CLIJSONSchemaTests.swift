import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `--json` as tools expect it — ISO 8601 dates, `/` unescaped, secrets as
/// text beside `secretBase64` — and each command's output conforming to the schema documented
/// for it in docs/cli-json.schema.json (docs/CLI-JSON.md).
@Suite(.blocksItsThread, .serialized) struct CLIJSONSchemaTests {
    static let passcode = "e2e-json-passcode"
    static let passphrase = "e2e-json-passphrase"
    static let repository = Repository.root

    /// Commands the test does not run, and why: each needs a provider or a fixture of its own,
    /// and is covered by the suite named.
    static let notRunHere = [
        "import apple-notes": "AppleNotesImportTests (a NoteStore.sqlite fixture)",
        "web reset-password": "WebPasswordResetTests (an account registered on the web; its output checked against this schema there)",
        "import secret-service": "SecretServiceImportCommandTests (gnome-keyring on a private bus)",
        "secret-service allow": "SecretServiceAccessTests", "secret-service revoke": "SecretServiceAccessTests",
        "note rewrap": "NotesCLITests.resetKeepsOldNotesUnderTheirPassphrase (a note of an earlier passphrase)",
        "sync join": "SyncDevicesTests (a server on PostgreSQL; each output checked against this schema there)",
        "sync recover": "SyncDevicesTests", "sync approve": "SyncDevicesTests", "sync devices": "SyncDevicesTests",
        "sync remove": "SyncDevicesTests", "sync leave": "SyncDevicesTests", "sync status": "SyncDevicesTests",
        "sync now": "SyncNowTests", "sync conflicts": "SyncNowTests", "sync conflicts restore": "SyncNowTests",
        "sync conflicts show": "SyncNowTests", "sync conflicts discard": "SyncNowTests",
    ]

    @Test func everyCommandsJSONConformsToItsDocumentedSchema() throws {
        let check = try JSONSchemaCheck(file: Self.repository.appendingPathComponent("docs/cli-json.schema.json"))
        // The check itself catches what it must: a wrong type, an undocumented key, a date in seconds.
        let wrong = try JSONTree(parsing: Data(#"{"id": 7, "itemClass": "genp", "extra": 1, "attributes": {"creationDate": 1700000000}}"#.utf8))
        #expect(check.violations(of: wrong, against: .object(["$ref": .string("#/$defs/Item")])).count == 3)
        let harness = try Harness()
        let secret = "https://example.com/a/b-\(UUID().uuidString.prefix(6))"
        harness.secrets = [Self.passcode, Self.passphrase]
        try harness.startDaemon()
        var covered: Set<String> = []
        @discardableResult
        func run(
            _ command: String, _ arguments: [String], input: String? = nil, revealing: [String] = [], fails: Bool = false,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws -> JSONTree {
            let result = try harness.run(
                Harness.binaries.appendingPathComponent("tresor"), arguments + ["--json"], input: input, revealing: revealing)
            #expect(result.succeeded != fails, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(!result.stdout.contains(#"\/"#), "slashes are not escaped: \(arguments)", sourceLocation: sourceLocation)
            let tree = try JSONTree(parsing: Data(result.stdout.utf8))
            let schema =
                fails
                ? JSONTree.object(["$ref": .string("#/$defs/Error")]) : try #require(check.schema(forCommand: command), "no schema for \(command)")
            let violations = check.violations(of: tree, against: schema)
            #expect(violations.isEmpty, "\(command): \(violations)\n\(result.stdout)", sourceLocation: sourceLocation)
            if !fails { covered.insert(command) }
            return tree
        }

        try run("init", ["init", "--passcode-stdin"], input: "\(Self.passcode)\n")
        try run("status", ["status"])
        let client = try TresorKitClient.connect(harness)
        let hold = try client.holdAutoLock(reason: "json test")
        let held = try run("status", ["status"])
        if case .array(let holds)? = held["holds"] { #expect(holds.first?["since"]?.string?.hasSuffix("Z") == true, "a hold's date in ISO 8601") }
        try client.releaseHold(hold)
        try run("lock", ["lock"])
        try run("unlock", ["unlock", "--passcode-stdin"], input: "\(Self.passcode)\n")
        try run(
            "item add",
            ["item", "add", "--service", "json.example", "--account", "ada", "--label", "Slash/Label", "--readable-by-scripts", "--secret-stdin"],
            input: secret)
        let item = try run("item get", ["item", "get", "--service", "json.example"], revealing: [secret])
        #expect(item["secret"] == .string(secret), "the secret as text")
        #expect(item["secretBase64"] == .string(Data(secret.utf8).base64EncodedString()))
        #expect(item["attributes"]?["creationDate"]?.string?.hasSuffix("Z") == true)
        try run(
            "item add", ["item", "add", "--class", "inet", "--server", "bin.example", "--account", "b", "--readable-by-scripts", "--secret-stdin"],
            input: "\u{01}\u{FF}")
        let binary = try run("item find", ["item", "find", "--class", "inet", "--show-secrets"])
        if case .array(let found) = binary { #expect(found.first?["secretBase64"] != nil) }
        try run("item find", ["item", "find"])
        try run("item generate", ["item", "generate", "--readable-by-scripts", "--service", "json.generated"])
        try run("item update", ["item", "update", "--service", "json.example", "--set", "comment=c"])
        try run("item delete", ["item", "delete", "--service", "json.generated"])
        try run("item get", ["item", "get", "--service", "no.such.example"], fails: true)
        try run("keychain create", ["keychain", "create", "jsonvault", "--passcode-stdin"], input: "vault-pass\n")
        harness.secrets.append("vault-pass")
        try run("keychain list", ["keychain", "list"])
        try run("keychain delete", ["keychain", "delete", "jsonvault", "--passcode-stdin"], input: "vault-pass\n")
        try run(
            "app register", ["app", "register", "--id", "JSONT.app", "--team", "JSONT", "--exe", "/bin/true", "--passcode-stdin"],
            input: "\(Self.passcode)\n")
        try run("app list", ["app", "list"])
        try run("app remove", ["app", "remove", "JSONT.app", "--passcode-stdin"], input: "\(Self.passcode)\n")
        try run("secret-service owners", ["secret-service", "owners"])
        // A shell is a generic client: trust in it can be granted ahead of time, listed and taken back.
        let trusted = try run(
            "secret-service trust add", ["secret-service", "trust", "add", "/bin/sh", "--for", "1h", "--passcode-stdin"], input: "\(Self.passcode)\n")
        if case .array(let entries)? = trusted["trusted"] {
            #expect(entries.first?["until"]?.string?.hasSuffix("Z") == true, "the trust's end in ISO 8601")
        }
        try run("secret-service trust", ["secret-service", "trust"])
        try run("secret-service trust remove", ["secret-service", "trust", "remove", "--all"])

        try run("note passphrase status", ["note", "passphrase", "status"])
        try run(
            "note passphrase set", ["note", "passphrase", "set", "--hint", "--passphrase-stdin"],
            input: "\(Self.passphrase)\n\(Self.passphrase)\nthe usual\n")
        try run("note passphrase hint", ["note", "passphrase", "hint"])
        let note = try run("note new", ["note", "new", "--folder", "-"], input: "Drafts\nA/B title\nbody\n")
        let id = try #require(note["id"]?.string)
        try run("note list", ["note", "list"])
        try run("note search", ["note", "search"], input: "body\n")
        try run("note edit", ["note", "edit", id, "--pin"])
        let file = harness.root.appendingPathComponent("picture.png")
        try Data("png".utf8).write(to: file)
        let attachment = try run("note attach", ["note", "attach", id, "--kind", "image", "--file", file.path])
        try run("note lock", ["note", "lock", id, "--passphrase-stdin"], input: "\(Self.passphrase)\n")
        try run("note show", ["note", "show", id])
        try run(
            "note export-attachment",
            ["note", "export-attachment", id, try #require(attachment["id"]?.string), "--out", harness.root.appendingPathComponent("out.png").path])
        try run("note lock-now", ["note", "lock-now"])
        try run("note show", ["note", "show", id], fails: true)
        try run("note unlock", ["note", "unlock", id, "--passphrase-stdin"], input: "\(Self.passphrase)\n")
        try run(
            "note passphrase change", ["note", "passphrase", "change", "--passphrase-stdin"], input: "\(Self.passphrase)\n\(Self.passphrase)-2\n")
        harness.secrets.append("\(Self.passphrase)-2")
        try run("note passphrase keychain", ["note", "passphrase", "keychain", "on", "--passphrase-stdin"], input: "\(Self.passphrase)-2\n")
        try run("note passphrase reset", ["note", "passphrase", "reset", "--passcode-stdin"], input: "\(Self.passcode)\n\(Self.passphrase)-3\n")
        harness.secrets.append("\(Self.passphrase)-3")
        try run("note folder create", ["note", "folder", "create"], input: "Archive\n")
        try run("note folder list", ["note", "folder", "list"])
        try run("note folder delete", ["note", "folder", "delete"], input: "Archive\n")
        try run("note attachment-backup", ["note", "attachment-backup", id, try #require(attachment["id"]?.string), "--exclude"])
        try run("note detach", ["note", "detach", id, try #require(attachment["id"]?.string)])
        try run("note delete", ["note", "delete", id])
        try run("note trash list", ["note", "trash", "list"])
        try run("note trash restore", ["note", "trash", "restore", id])
        try run("note delete", ["note", "delete", id])
        try run("note trash delete", ["note", "trash", "delete", id])
        try run("note trash empty", ["note", "trash", "empty"])
        let backup = harness.root.appendingPathComponent("json.tresor-backup").path
        let backupPassphrase = "e2e-json-backup-passphrase"
        harness.secrets.append(backupPassphrase)
        try run(
            "backup create", ["backup", "create", "--out", backup, "--work-factor", "14", "--passcode-stdin"],
            input: "\(Self.passcode)\n\(backupPassphrase)\n\(backupPassphrase)\n")
        try run("backup verify", ["backup", "verify", backup, "--passphrase-stdin"], input: "\(backupPassphrase)\n")
        try run("backup restore", ["backup", "restore", backup, "--dry-run", "--passcode-stdin"], input: "\(Self.passcode)\n\(backupPassphrase)\n")
        try run("widget", ["widget"])
        try run("web sessions", ["web", "sessions"])
        try run("web sessions list", ["web", "sessions", "list"])
        try run("web sessions end", ["web", "sessions", "end", "--all"])
        try run("web invite", ["web", "invite", "carol"])
        try run("web reset-password", ["web", "reset-password", "nobody"], fails: true)
        try run("sync include", ["sync", "include", "exe:/usr/bin/secret-tool"])
        try run("sync include", ["sync", "include", "--list"])
        try run("sync exclude", ["sync", "exclude", "exe:/usr/bin/secret-tool"])
        try run("doctor", ["doctor"])
        try run("passcode link-login", ["passcode", "link-login", "--passcode-stdin"], input: "\(Self.passcode)\n\(Self.passcode)-login\n")
        harness.secrets.append("\(Self.passcode)-login")
        let linked = try run("status", ["status"])
        #expect(linked["loginLink"]?["linkedAt"]?.string?.hasSuffix("Z") == true, "the link's date in ISO 8601")
        try run("passcode unlink-login", ["passcode", "unlink-login", "--passcode-stdin"], input: "\(Self.passcode)\n")
        try run("passcode change", ["passcode", "change", "--passcode-stdin"], input: "\(Self.passcode)\n\(Self.passcode)-2\n")
        try run("passcode remove", ["passcode", "remove", "--passcode-stdin"], input: "\(Self.passcode)-2\n")
        harness.secrets.append("\(Self.passcode)-2")
        try run("daemon status", ["daemon", "status"])
        try run("daemon restart", ["daemon", "restart"])
        try run("daemon stop", ["daemon", "stop"])

        let missing = Set(check.commands).subtracting(covered).subtracting(Self.notRunHere.keys)
        #expect(missing.isEmpty, "commands whose JSON no test checked: \(missing.sorted())")
        #expect(Set(covered).isSubset(of: check.commands), "commands missing from the schema: \(covered.subtracting(check.commands))")
    }
}
