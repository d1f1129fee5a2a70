import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// `tresor item …` against the real daemon: every operation, the protection-class ×
/// lock-state matrix, user presence, System Roots and bad input.
@Suite(.blocksItsThread, .serialized) struct KeychainCLITests {
    static let passcode = "e2e-keychain-passcode"

    func initialized() throws -> Harness {
        let harness = try Harness.initialized(passcode: Self.passcode)
        return harness
    }

    @Test func addGetFindUpdateDelete() throws {
        let harness = try initialized()
        // `item get` prints this secret on purpose; it must still reach no log and no file in the clear.
        let secret = "e2e-secret-\(UUID().uuidString.prefix(6))"
        let added = try harness.tresor(
            [
                "item", "add", "--service", "api.example.com", "--account", "ci", "--label", "CI token", "--attribute", "env=prod",
                "--readable-by-scripts", "--secret-stdin",
            ],
            input: secret + "\n")
        #expect(added.succeeded, "\(added.stderr)")

        let get = try harness.tresor(["item", "get", "--service", "api.example.com", "--account", "ci"])
        #expect(get.stdout == secret, "get prints the secret alone, no newline when not on a terminal")

        let found = try harness.json([KeychainItem].self, ["item", "find", "--attribute", "env=prod"])
        #expect(found.count == 1)
        #expect(found.first?.secret == nil, "find never prints secrets unless asked")
        #expect(found.first?.attributes?.label == "CI token")
        #expect(found.first?.attributes?.accessGroup == "tresor")
        // Without --json, each attribute on a line of its own: strings, booleans, maps, dates.
        let shown = try harness.tresor(["item", "find", "--service", "api.example.com"]).stdout
        for line in ["  label: CI token", "  custom: env=prod", "  synchronizable: false", "  accessGroup: tresor", "  creationDate: 20"] {
            #expect(shown.contains(line), "\(line) in \(shown)")
        }

        let duplicate = try harness.json(
            ErrorResponse.self, ["item", "add", "--service", "api.example.com", "--account", "ci", "--secret-stdin"], input: "x\n")
        #expect(duplicate.error.code == .duplicateItem)
        #expect(duplicate.error.osStatus == -25299)

        #expect(try harness.tresor(["item", "update", "--service", "api.example.com", "--set", "label=Renamed"], input: nil).succeeded)
        #expect(try harness.tresor(["item", "update", "--service", "api.example.com", "--secret-stdin"], input: "rotated\n").succeeded)
        #expect(try harness.tresor(["item", "get", "--service", "api.example.com", "--account", "ci"]).stdout == "rotated")
        #expect(try harness.json([KeychainItem].self, ["item", "find", "--service", "api.example.com"]).first?.attributes?.label == "Renamed")

        #expect(try harness.tresor(["item", "delete", "--service", "api.example.com", "--account", "ci"]).stdout.contains("Deleted 1 item"))
        let gone = try harness.tresor(["item", "get", "--service", "api.example.com", "--account", "ci", "--verbose"])
        #expect(gone.status == 1)
        #expect(gone.stderr.contains("-25300"))
        #expect(!harness.daemonLog.contains(secret))
        #expect(try harness.homeFiles().allSatisfy { $0.1.range(of: Data(secret.utf8)) == nil })
        try harness.expectNoSecretLeaked()
    }

    /// A get that does not name exactly one item fails and lists the candidates — never their
    /// secrets — instead of printing one of them (a script could get the wrong secret).
    /// A password piped in loses the line ending `echo` adds (`\n` or `\r\n`), nothing more;
    /// key data is kept byte for byte, a final `0x0A` and all.
    @Test func aPipedPasswordLosesOneLineEndingAndKeyDataNothing() throws {
        let harness = try initialized()
        for (service, input, kept) in [
            ("crlf.example", "pass\r\n", "pass"), ("cr.example", "pass\r", "pass\r"), ("lf.example", "pass\n\n", "pass\n"),
        ] {
            let added = try harness.tresor(
                ["item", "add", "--service", service, "--account", "ci", "--readable-by-scripts", "--secret-stdin"], input: input)
            #expect(added.succeeded, "\(added.stderr)")
            #expect(try harness.tresor(["item", "get", "--service", service, "--account", "ci"]).stdout == kept, "\(service)")
        }
        let key = "\u{01}\u{02}\u{03}\n"
        let added = try harness.tresor(
            [
                "item", "add", "--class", "keys", "--key-class", "symmetric", "--key-type", "aes", "--application-tag", "exact",
                "--readable-by-scripts", "--secret-stdin",
            ],
            input: key)
        #expect(added.succeeded, "\(added.stderr)")
        #expect(try harness.tresor(["item", "get", "--class", "keys", "--application-tag", "exact"]).stdout == key)
    }

    /// A certificate given in PEM, as `openssl` writes it, is kept as its DER, as Apple's
    /// keychain keeps certificates; two in one input are refused.
    /// A synchronizable item of a class that never leaves this device is refused before its
    /// secret is asked for, by `add` and `generate` alike.
    @Test func aSynchronizableThisDeviceOnlyItemIsRefusedBeforeItsSecret() throws {
        let harness = try initialized()
        for command in [["item", "add", "--secret-stdin"], ["item", "generate"]] {
            let refused = try harness.tresor(
                command + ["--service", "tdo.example.com", "--account", "ada", "--accessible", "whenUnlockedThisDeviceOnly", "--synchronizable"],
                input: "never-read\n")
            #expect(refused.status == 64 && refused.stderr.contains("exclude each other"), "\(command): \(refused.stderr)")
        }
        #expect(try harness.tresor(["item", "get", "--service", "tdo.example.com", "--account", "ada", "--synchronizable"]).status != 0)
    }

    @Test func aPEMCertificateIsKeptAsItsDER() throws {
        let harness = try initialized()
        let pem = "/etc/ssl/certs/ISRG_Root_X1.pem"
        let der = try harness.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "openssl x509 -in \(pem) -outform DER | base64 -w0"])
        #expect(der.succeeded && !der.stdout.isEmpty, "\(der.stderr)")
        let text = try String(contentsOfFile: pem, encoding: .utf8)
        let added = try harness.json(
            KeychainItem.self, ["item", "add", "--class", "cert", "--label", "ISRG", "--readable-by-scripts", "--secret-stdin"], input: text)
        #expect(added.attributes?.subject != nil, "read as a certificate")
        let tresor = harness.binaries.appendingPathComponent("tresor").path
        let kept = try harness.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "\(tresor) item get --class cert --label ISRG | base64 -w0"])
        #expect(kept.stdout == der.stdout, "kept as its DER")
        let twice = try harness.tresor(["item", "add", "--class", "cert", "--label", "two", "--secret-stdin"], input: text + text)
        #expect(!twice.succeeded && twice.stderr.contains("one PEM certificate at a time"), "\(twice.stderr)")
        let mixed = try harness.tresor(["item", "generate", "--service", "g.example", "--words", "3", "--length", "10"])
        #expect(!mixed.succeeded && mixed.stderr.contains("--words makes a passphrase of words"), "\(mixed.stderr)")
    }

    /// Like a delete, an update that names no item is refused unless `--all` says so: a
    /// forgotten `--service` does not relabel the whole keychain.
    @Test func anUpdateNamingNoItemIsRefusedUnlessAll() throws {
        let harness = try initialized()
        for service in ["one.example", "two.example"] {
            #expect(try harness.tresor(["item", "add", "--service", service, "--account", "ci", "--secret-stdin"], input: "s\n").succeeded)
        }
        let refused = try harness.tresor(["item", "update", "--set", "label=oops"])
        #expect(!refused.succeeded && refused.stderr.contains("--all"), "\(refused.stderr)")
        #expect(try harness.json([KeychainItem].self, ["item", "find"]).allSatisfy { $0.attributes?.label != "oops" })
        #expect(try harness.tresor(["item", "update", "--all", "--set", "label=both"]).succeeded)
        #expect(try harness.json([KeychainItem].self, ["item", "find"]).map { $0.attributes?.label } == ["both", "both"])
    }

    /// A delete or an update whose filter matches several items changes none of them: they are
    /// listed, as for `item get`, and `--all` takes them all. `--account ada` alone must not
    /// wipe ada's items across services.
    @Test func aDeleteOrUpdateMatchingSeveralItemsChangesNoneUnlessAll() throws {
        let harness = try initialized()
        for service in ["one.example", "two.example"] {
            let added = try harness.tresor(
                ["item", "add", "--service", service, "--account", "ada", "--readable-by-scripts", "--secret-stdin"], input: "s\n")
            #expect(added.succeeded, "\(added.stderr)")
        }
        #expect(try harness.tresor(["item", "add", "--service", "one.example", "--account", "bob", "--secret-stdin"], input: "b\n").succeeded)
        let deleted = try harness.tresor(["item", "delete", "--account", "ada"])
        #expect(!deleted.succeeded && deleted.stderr.contains("2 items match") && deleted.stderr.contains("pass --all"), "\(deleted.stderr)")
        #expect(deleted.stderr.contains("one.example") && deleted.stderr.contains("two.example"), "the candidates are listed")
        let updated = try harness.tresor(["item", "update", "--account", "ada", "--secret-stdin"], input: "replaced\n")
        #expect(!updated.succeeded && updated.stderr.contains("2 items match"), "\(updated.stderr)")
        #expect(try harness.json([KeychainItem].self, ["item", "find"]).count == 3, "nothing deleted")
        #expect(try harness.tresor(["item", "get", "--service", "two.example", "--account", "ada"]).stdout == "s", "nothing replaced")
        #expect(try harness.tresor(["item", "delete", "--service", "two.example", "--account", "ada"]).stdout.contains("Deleted 1 item"))
        #expect(try harness.tresor(["item", "delete", "--service", "one.example", "--all"]).stdout.contains("Deleted 2 items"))
        #expect(try harness.json(ErrorResponse.self, ["item", "find"]).error.code == .itemNotFound, "all three deleted")
    }

    @Test func getNeedsExactlyOneItem() throws {
        let harness = try initialized()
        // `item get` prints these on purpose (as in addGetFindUpdateDelete).
        for (account, secret) in [("ada", "ada-secret-7"), ("bob", "bob-secret-8")] {
            let added = try harness.tresor(
                ["item", "add", "--service", "github.com", "--account", account, "--readable-by-scripts", "--secret-stdin"], input: secret + "\n")
            #expect(added.succeeded, "\(added.stderr)")
        }
        for filter in [["--service", "github.com"], []] {
            let ambiguous = try harness.tresor(["item", "get"] + filter)
            #expect(!ambiguous.succeeded)
            #expect(ambiguous.stdout.isEmpty, "no secret printed")
            #expect(
                ambiguous.stderr.contains("2 items match") && ambiguous.stderr.contains("account=ada") && ambiguous.stderr.contains("account=bob"),
                "\(ambiguous.stderr)")
            #expect(!ambiguous.stderr.contains("secret-"), "the candidates' secrets are not shown")
        }
        let json = try harness.json(ErrorResponse.self, ["item", "get", "--service", "github.com"])
        #expect(json.error.code == .param)
        #expect(try harness.tresor(["item", "get", "--service", "github.com", "--account", "bob"]).stdout == "bob-secret-8")
        let first = try harness.tresor(["item", "get", "--service", "github.com", "--first"])
        #expect(first.succeeded && ["ada-secret-7", "bob-secret-8"].contains(first.stdout))
        let none = try harness.tresor(["item", "get", "--service", "gitlab.com"])
        #expect(!none.succeeded && none.stderr.contains("no item matches"))
    }

    @Test func protectionClassesFollowTheLockState() throws {
        let harness = try initialized()
        for protectionClass in ProtectionClass.allCases {
            let result = try harness.tresor(
                [
                    "item", "add", "--service", "matrix", "--account", protectionClass.rawValue, "--accessible", protectionClass.rawValue,
                    "--readable-by-scripts", "--secret-stdin",
                ],
                input: "secret-of-\(protectionClass.rawValue)\n")
            #expect(result.succeeded, "\(protectionClass): \(result.stderr)")
        }
        func readable() throws -> Set<String> {
            Set(
                try ProtectionClass.allCases.filter { protectionClass in
                    let result = try harness.tresor(["item", "get", "--service", "matrix", "--account", protectionClass.rawValue, "--verbose"])
                    if !result.succeeded {
                        #expect(result.stderr.contains("-25308") || result.stderr.contains("-25300"), "\(result.stderr)")
                    }
                    return result.stdout == "secret-of-\(protectionClass.rawValue)"
                }.map(\.rawValue))
        }
        #expect(try readable() == Set(ProtectionClass.allCases.map(\.rawValue)), "unlocked: every class")

        harness.killDaemon()
        try harness.startDaemon()
        #expect(try readable() == ["always", "alwaysThisDeviceOnly"], "locked since start")
        let locked = try harness.json(ErrorResponse.self, ["item", "get", "--service", "matrix", "--account", "whenUnlocked"])
        #expect(locked.error.code == .interactionNotAllowed)

        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try readable().count == 7)
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try readable() == ["always", "alwaysThisDeviceOnly", "afterFirstUnlock", "afterFirstUnlockThisDeviceOnly"])

        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try harness.tresor(["passcode", "remove", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        let purged = try harness.json(ErrorResponse.self, ["item", "get", "--service", "matrix", "--account", "whenPasscodeSetThisDeviceOnly"])
        #expect(purged.error.code == .itemNotFound, "whenPasscodeSetThisDeviceOnly items are gone with the passcode")
        #expect(try readable().count == 6)
        let refused = try harness.tresor(
            ["item", "add", "--service", "matrix", "--account", "again", "--accessible", "whenPasscodeSetThisDeviceOnly", "--secret-stdin"],
            input: "x\n")
        #expect(!refused.succeeded)
        #expect(refused.stderr.contains("passcode"))
        try harness.expectNoSecretLeaked()
    }

    @Test func userPresenceNeedsThePasscode() throws {
        let harness = try initialized()
        #expect(
            try harness.tresor(["item", "add", "--service", "bank", "--account", "me", "--user-presence", "--secret-stdin"], input: "pin-1234\n")
                .succeeded)
        let without = try harness.run(
            URL(fileURLWithPath: "/usr/bin/setsid"),
            ["--wait", Harness.binaries.appendingPathComponent("tresor").path, "item", "get", "--service", "bank", "--account", "me"], input: "")
        #expect(without.status == 1, "no terminal and no --passcode-stdin: refused")
        #expect(without.stdout.isEmpty)
        let wrong = try harness.tresor(
            ["item", "get", "--service", "bank", "--account", "me", "--passcode-stdin", "--verbose"], input: "not-the-passcode\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("-25293"))
        #expect(!wrong.stdout.contains("pin-1234"))
        let right = try harness.tresor(["item", "get", "--service", "bank", "--account", "me", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(right.stdout == "pin-1234")
        // Attributes stay listable without it.
        #expect(try harness.json([KeychainItem].self, ["item", "find", "--service", "bank"]).count == 1)
        try harness.expectNoSecretLeaked()
    }

    @Test func systemRootsAreListedAndReadOnly() throws {
        let harness = try initialized()
        let roots = try harness.json([KeychainItem].self, ["item", "find", "--class", "cert", "--keychain", "System Roots"])
        #expect(roots.count > 50, "Debian's ca-certificates holds well over 50 roots")
        #expect(roots.allSatisfy { $0.itemClass == .certificate && $0.attributes?.subject != nil })
        for arguments in [
            ["item", "add", "--class", "cert", "--keychain", "System Roots", "--secret-stdin"],
            ["item", "delete", "--class", "cert", "--keychain", "System Roots", "--all"],
            ["item", "update", "--class", "cert", "--keychain", "System Roots", "--all", "--set", "label=x"],
        ] {
            let result = try harness.json(ErrorResponse.self, arguments, input: "x\n")
            #expect(result.error.code == .readOnly, "\(arguments)")
        }
        #expect(try harness.json([KeychainItem].self, ["item", "find", "--class", "cert", "--keychain", "System Roots"]).count == roots.count)

        // Public data: a program that is no registered application (curl) searches it too, and
        // the login keychain stays closed to it.
        func search(_ keychain: String?) throws -> (Int, String) {
            let request = SearchItemsRequest(keychain: keychain, query: ItemQuery(.certificate, limit: .all))
            return try harness.curl("POST", Route.searchItems, body: try APICoding.encoder.encode(request))
        }
        let (status, body) = try search("System Roots")
        #expect(status == 200, "\(body)")
        let found = try APICoding.decoder.decode(ItemsResponse.self, from: Data(body.utf8)).items
        #expect(found.count == roots.count)
        let (loginStatus, loginBody) = try search(nil)
        #expect(loginStatus == 403 && apiErrorCode(in: loginBody) == .missingEntitlement, "\(loginStatus) \(loginBody)")
    }
}
