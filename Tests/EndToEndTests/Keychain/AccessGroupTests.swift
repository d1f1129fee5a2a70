import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// Access groups with real separate executables (docs/API.md, "Access groups: who may use which"):
/// ProbeAlpha and ProbeBeta are two builds of one small keychain client, so the daemon sees two
/// executable hashes.
@Suite(.blocksItsThread, .serialized) struct AccessGroupTests {
    static let passcode = "e2e-groups-passcode"

    /// Copies of the probes in the test's folder, so one can be replaced by the other.
    struct Probes {
        let alpha: URL
        let beta: URL
    }

    func setUp() throws -> (Harness, Probes) {
        let harness = try Harness.initialized(passcode: Self.passcode)
        let folder = harness.root.appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let probes = Probes(alpha: folder.appendingPathComponent("alpha"), beta: folder.appendingPathComponent("beta"))
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeAlpha"), to: probes.alpha)
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeBeta"), to: probes.beta)
        return (harness, probes)
    }

    func register(_ harness: Harness, _ executable: URL, id: String, team: String, groups: [String] = []) throws {
        let result = try harness.tresor(
            ["app", "register", "--id", id, "--team", team, "--exe", executable.path, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: Self.passcode + "\n")
        #expect(result.succeeded, "\(result.stderr)")
    }

    func probe(_ harness: Harness, _ executable: URL, _ arguments: [String], input: String? = nil) throws -> Harness.Result {
        try harness.run(executable, arguments, input: input)
    }

    @Test func applicationsOfDifferentTeamsAreIsolated() throws {
        let (harness, probes) = try setUp()

        let unregistered = try probe(harness, probes.alpha, ["add", "svc", "acct"], input: "x")
        #expect(unregistered.stdout.contains("error missingEntitlement -34018"), "\(unregistered.stdout)")
        // Its developer reads why in the daemon's log, once, with the path to register.
        _ = try probe(harness, probes.alpha, ["get", "svc", "acct"])
        let told = harness.daemonLog.components(separatedBy: "is not a registered application asked for the keychain")
        #expect(told.count == 2 && harness.daemonLog.contains(probes.alpha.resolvingSymlinksInPath().path), "\(harness.daemonLog.suffix(2000))")

        try register(harness, probes.alpha, id: "TEAMA.alpha", team: "TEAMA", groups: ["TEAMA.shared"])
        try register(harness, probes.beta, id: "TEAMB.beta", team: "TEAMB")
        let badGroup = try harness.tresor(
            ["app", "register", "--id", "TEAMA.other", "--team", "TEAMA", "--exe", "/bin/true", "--group", "TEAMB.x", "--passcode-stdin"],
            input: Self.passcode + "\n")
        #expect(!badGroup.succeeded)
        #expect(badGroup.stderr.contains("must start with the team id"))

        #expect(try probe(harness, probes.beta, ["add", "beta-svc", "acct"], input: "beta-secret").stdout.hasPrefix("added"))
        #expect(try probe(harness, probes.alpha, ["add", "alpha-svc", "acct"], input: "alpha-secret").stdout.hasPrefix("added"))

        // Alpha cannot read, find, update or delete Beta's item…
        #expect(try probe(harness, probes.alpha, ["get", "beta-svc", "acct"]).stdout.contains("error itemNotFound"))
        #expect(try probe(harness, probes.alpha, ["get", "beta-svc", "acct", "TEAMB.beta"]).stdout.contains("error missingEntitlement"))
        #expect(try probe(harness, probes.alpha, ["find", "beta-svc"]).stdout.contains("error itemNotFound"))
        #expect(try probe(harness, probes.alpha, ["update", "beta-svc", "acct"], input: "stolen").stdout.contains("error itemNotFound"))
        #expect(try probe(harness, probes.alpha, ["delete", "beta-svc", "acct"]).stdout.contains("error itemNotFound"))
        // …nor add into Beta's group.
        #expect(try probe(harness, probes.alpha, ["add", "x", "y", "TEAMB.beta"], input: "z").stdout.contains("error missingEntitlement"))
        // Beta's item is untouched.
        #expect(try probe(harness, probes.beta, ["get", "beta-svc", "acct"]).stdout == "beta-secret\n")
        #expect(try probe(harness, probes.alpha, ["get", "alpha-svc", "acct"]).stdout == "alpha-secret\n")

        // The CLI (keychain access) lists every group, but reveals Beta's secret only with the passcode.
        let listed = try harness.json([KeychainItem].self, ["item", "find"])
        #expect(Set(listed.compactMap(\.attributes?.accessGroup)) == ["TEAMA.alpha", "TEAMB.beta"])
        let withoutPasscode = try harness.tresor(["item", "get", "--service", "beta-svc", "--passcode-stdin"], input: "")
        #expect(withoutPasscode.status == 1)
        #expect(!withoutPasscode.stdout.contains("beta-secret"))
        let withPasscode = try harness.tresor(["item", "get", "--service", "beta-svc", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(withPasscode.stdout == "beta-secret")

        // Replacing a registered executable's file with another binary: refused.
        try FileManager.default.removeItem(at: probes.alpha)
        try FileManager.default.copyItem(at: Harness.binaries.appendingPathComponent("ProbeBeta"), to: probes.alpha)
        let swapped = try probe(harness, probes.alpha, ["get", "alpha-svc", "acct"])
        // The copied file *is* Beta's binary: it gets Beta's rights, never Alpha's.
        #expect(!swapped.stdout.contains("alpha-secret"))
        let other = probes.alpha.deletingLastPathComponent().appendingPathComponent("tampered")
        var bytes = try Data(contentsOf: Harness.binaries.appendingPathComponent("ProbeAlpha"))
        bytes.append(contentsOf: [0, 1, 2, 3])  // still runs; another hash
        try bytes.write(to: other)
        chmod(other.path, 0o755)
        #expect(try probe(harness, other, ["get", "alpha-svc", "acct"]).stdout.contains("error missingEntitlement -34018"))
        try harness.expectNoSecretLeaked()
    }

    /// A rebuilt application is a new executable: registering its id again (with the passcode)
    /// replaces the old executable, and the rebuild reads the application's items; the old
    /// build reads nothing any more. A wrong passcode replaces nothing.
    @Test func registeringARebuiltApplicationAgainReplacesItsExecutable() throws {
        let (harness, probes) = try setUp()
        try register(harness, probes.alpha, id: "TEAMA.alpha", team: "TEAMA")
        #expect(try probe(harness, probes.alpha, ["add", "alpha-svc", "acct"], input: "alpha-secret").stdout.hasPrefix("added"))
        let rebuilt = probes.alpha.deletingLastPathComponent().appendingPathComponent("alpha-rebuilt")
        var bytes = try Data(contentsOf: probes.alpha)
        bytes.append(contentsOf: [0, 1, 2, 3])  // still runs; another hash, as a rebuild has
        try bytes.write(to: rebuilt)
        chmod(rebuilt.path, 0o755)
        #expect(try probe(harness, rebuilt, ["get", "alpha-svc", "acct"]).stdout.contains("error missingEntitlement -34018"))

        let refused = try harness.tresor(
            ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", rebuilt.path, "--passcode-stdin"], input: "not-the-passcode\n")
        #expect(!refused.succeeded)
        #expect(try probe(harness, rebuilt, ["get", "alpha-svc", "acct"]).stdout.contains("error missingEntitlement -34018"))

        try register(harness, rebuilt, id: "TEAMA.alpha", team: "TEAMA")
        #expect(try probe(harness, rebuilt, ["get", "alpha-svc", "acct"]).stdout == "alpha-secret\n")
        #expect(try probe(harness, probes.alpha, ["get", "alpha-svc", "acct"]).stdout.contains("error missingEntitlement -34018"))
        #expect(try harness.json([TresorKit.Application].self, ["app", "list"]).map(\.applicationID) == ["TEAMA.alpha"])
        try harness.expectNoSecretLeaked()
    }

    @Test func applicationsOfOneTeamShareTheirTeamGroup() throws {
        let (harness, probes) = try setUp()
        try register(harness, probes.alpha, id: "TEAMA.alpha", team: "TEAMA", groups: ["TEAMA.shared"])
        try register(harness, probes.beta, id: "TEAMA.beta", team: "TEAMA", groups: ["TEAMA.shared"])
        #expect(try probe(harness, probes.alpha, ["add", "shared-svc", "acct", "TEAMA.shared"], input: "team-secret").stdout.hasPrefix("added"))
        #expect(try probe(harness, probes.alpha, ["add", "private-svc", "acct"], input: "alpha-only").stdout.hasPrefix("added"))
        #expect(try probe(harness, probes.beta, ["get", "shared-svc", "acct"]).stdout == "team-secret\n")
        #expect(try probe(harness, probes.beta, ["get", "private-svc", "acct"]).stdout.contains("error itemNotFound"))
        let apps = try harness.json([Application].self, ["app", "list"])
        #expect(apps.map(\.applicationID) == ["TEAMA.alpha", "TEAMA.beta"])
        // Removing one needs the passcode again, as registering does: any process of the user
        // could otherwise take an application's identity away.
        let unasked = try harness.tresor(["app", "remove", "TEAMA.beta", "--json"])
        #expect(
            !unasked.succeeded && unasked.stdout.contains("pass the passcode on standard input with --passcode-stdin"),
            "says how to give it: \(unasked.stdout)")
        let wrong = try harness.tresor(["app", "remove", "TEAMA.beta", "--passcode-stdin", "--json"], input: "wrong\n")
        #expect(!wrong.succeeded && wrong.stdout.contains("authFailed"), "\(wrong.stdout)")
        #expect(try harness.json([Application].self, ["app", "list"]).count == 2, "removed without the passcode")
        #expect(try harness.tresor(["app", "remove", "TEAMA.beta", "--passcode-stdin"], input: Self.passcode + "\n").succeeded)
        #expect(try probe(harness, probes.beta, ["get", "shared-svc", "acct"]).stdout.contains("error missingEntitlement"))
        // Removed twice: said of an application, not of an item.
        let again = try harness.tresor(["app", "remove", "TEAMA.beta", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(!again.succeeded && again.stderr.contains("no registered application TEAMA.beta"), "\(again.stderr)")
    }

    /// Registering an application again — a rebuild — keeps its shared groups unless others are
    /// named, and says what a registration took away; one executable is one application; an
    /// interpreter registered is one every script shares, and the user is told.
    @Test func registeringAgainKeepsTheGroupsAndSaysWhatItTookAway() throws {
        let (harness, probes) = try setUp()
        func register(_ arguments: [String], exe: String = probes.alpha.path) throws -> Harness.Result {
            try harness.tresor(
                ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", exe, "--passcode-stdin"] + arguments,
                input: Self.passcode + "\n")
        }
        func groups() throws -> [String] { try harness.json([Application].self, ["app", "list"]).first?.accessGroups ?? [] }
        try expectSucceeded(register(["--group", "TEAMA.shared", "--secret-service"]))
        let again = try register(["--secret-service"])
        #expect(again.succeeded && again.stderr.isEmpty, "\(again.stderr)")
        #expect(try groups() == ["TEAMA.shared"])
        let narrowed = try register(["--group", "TEAMA.other"])
        #expect(narrowed.succeeded, "\(narrowed.stderr)")
        #expect(narrowed.stderr.contains("warning: TEAMA.alpha no longer reads the items of TEAMA.shared"), "\(narrowed.stderr)")
        #expect(narrowed.stderr.contains("is no longer served on the Secret Service"), "\(narrowed.stderr)")
        #expect(try groups() == ["TEAMA.other"])

        let twice = try harness.tresor(
            ["app", "register", "--id", "TEAMA.second", "--team", "TEAMA", "--exe", probes.alpha.path, "--passcode-stdin"],
            input: Self.passcode + "\n")
        #expect(!twice.succeeded && twice.stderr.contains("is registered already, as TEAMA.alpha"), "\(twice.stderr)")
        #expect(!twice.stderr.contains("tresor item update"), "\(twice.stderr)")

        let shell = try harness.tresor(
            ["app", "register", "--id", "TEAMA.shell", "--team", "TEAMA", "--exe", "/bin/sh", "--passcode-stdin"], input: Self.passcode + "\n")
        #expect(shell.succeeded && shell.stderr.contains("runs whatever it is given"), "\(shell.stderr)")
        #expect(shell.stderr.contains("any script — reads TEAMA.shell's items"), "\(shell.stderr)")
    }

    @Test func registrationNeedsThePasscodeAndAnUnlockedKeybag() throws {
        let (harness, probes) = try setUp()
        let wrong = try harness.tresor(
            ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", probes.alpha.path, "--passcode-stdin", "--verbose"],
            input: "wrong\n")
        #expect(!wrong.succeeded)
        #expect(wrong.stderr.contains("-25293"))
        #expect(try harness.tresor(["lock"]).succeeded)
        let locked = try harness.tresor(
            ["app", "register", "--id", "TEAMA.alpha", "--team", "TEAMA", "--exe", probes.alpha.path, "--passcode-stdin"],
            input: Self.passcode + "\n")
        #expect(!locked.succeeded)
        #expect(locked.stderr.contains("the keybag is locked — run `tresor unlock`"), "\(locked.stderr)")
        #expect(try harness.json([Application].self, ["app", "list"]).isEmpty)
    }

    /// `tresor app register --development`: a build folder's binary identified by its path, so a
    /// rebuild keeps its items — and nothing else: a copy of the same file elsewhere is nobody,
    /// and it is never a D-Bus identity.
    @Test func aDevelopmentBuildIsItsPathAcrossRebuilds() throws {
        let (harness, probes) = try setUp()
        let registered = try harness.tresor(
            ["app", "register", "--development", "--id", "TEAMD.probe", "--team", "TEAMD", "--exe", probes.alpha.path, "--passcode-stdin"],
            input: Self.passcode + "\n")
        #expect(registered.succeeded, "\(registered.stderr)")
        #expect(registered.stderr.contains("warning: TEAMD.probe is a development build"), "the weaker identity is said: \(registered.stderr)")
        #expect(try probe(harness, probes.alpha, ["add", "dev-svc", "acct"], input: "dev-secret").stdout.hasPrefix("added"))

        // A rebuild: a new file (another inode, another hash) at the same path.
        let rebuilt = probes.alpha.deletingLastPathComponent().appendingPathComponent("alpha.new")
        var bytes = try Data(contentsOf: Harness.binaries.appendingPathComponent("ProbeAlpha"))
        bytes.append(contentsOf: Array("rebuilt \(UUID())".utf8))
        try bytes.write(to: rebuilt)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: rebuilt.path)
        try FileManager.default.removeItem(at: probes.alpha)
        try FileManager.default.moveItem(at: rebuilt, to: probes.alpha)
        #expect(try probe(harness, probes.alpha, ["get", "dev-svc", "acct"]).stdout == "dev-secret\n", "the rebuild keeps its items")

        // The same content at another path is not the application.
        let elsewhere = harness.root.appendingPathComponent("elsewhere")
        try FileManager.default.copyItem(at: probes.alpha, to: elsewhere)
        #expect(try probe(harness, elsewhere, ["get", "dev-svc", "acct"]).stdout.contains("error missingEntitlement"))

        let listed = try harness.tresor(["app", "list"])
        #expect(listed.stdout.contains("development build, by path"), "\(listed.stdout)")
        #expect(try harness.json([Application].self, ["app", "list"]).first?.isDevelopmentBuild == true)

        let onTheBus = try harness.tresor(
            [
                "app", "register", "--development", "--secret-service", "--id", "TEAMD.bus", "--team", "TEAMD", "--exe", probes.beta.path,
                "--passcode-stdin",
            ], input: Self.passcode + "\n")
        #expect(!onTheBus.succeeded && onTheBus.stderr.contains("exclude each other"), "\(onTheBus.stderr)")
    }

    /// A development build named through a symbolic link — SwiftPM's `.build/debug` is one — is
    /// registered as the file it names, the path its process shows.
    @Test func aDevelopmentBuildNamedThroughASymbolicLinkIsFound() throws {
        let (harness, probes) = try setUp()
        let linked = harness.root.appendingPathComponent("debug")
        try FileManager.default.createSymbolicLink(at: linked, withDestinationURL: probes.alpha.deletingLastPathComponent())
        let registered = try harness.tresor(
            [
                "app", "register", "--development", "--id", "TEAMD.probe", "--team", "TEAMD", "--exe",
                linked.appendingPathComponent(probes.alpha.lastPathComponent).path, "--passcode-stdin",
            ], input: Self.passcode + "\n")
        #expect(registered.succeeded, "\(registered.stderr)")
        #expect(try probe(harness, probes.alpha, ["add", "dev-svc", "acct"], input: "dev-secret").stdout.hasPrefix("added"))
        #expect(try harness.json([Application].self, ["app", "list"]).first?.executablePath == probes.alpha.resolvingSymlinksInPath().path)
    }
}
