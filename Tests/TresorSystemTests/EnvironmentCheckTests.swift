import Foundation
import Glibc
import Testing
import TresorSystem

/// A scratch folder (0700) removed when the test ends.
private final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-envcheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, 0o700)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `relative` (creating folders 0700) and sets its mode.
    @discardableResult
    func file(_ relative: String, _ text: String = "", mode: mode_t = 0o600) throws -> URL {
        let file = url.appendingPathComponent(relative)
        try dir(file.deletingLastPathComponent().path.dropFirst(url.path.count + 1).description)
        try Data(text.utf8).write(to: file)
        #expect(chmod(file.path, mode) == 0)
        return file
    }

    @discardableResult
    func dir(_ relative: String, mode: mode_t = 0o700) throws -> URL {
        let dir = relative.isEmpty ? url : url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        if !relative.isEmpty { #expect(chmod(dir.path, mode) == 0) }
        return dir
    }
}

/// Runs all checks with a fake proc/sys tree in `scratch` and returns the one named `id`.
private func finding(
    _ id: String, home: URL, scratch: Scratch,
    executables: [URL] = [], environment: [String: String] = [:]
) throws -> EnvironmentFinding {
    let context = EnvironmentCheckContext(
        home: home, executables: executables, environment: environment,
        procRoot: scratch.url.appendingPathComponent("proc"),
        sysRoot: scratch.url.appendingPathComponent("sys"), pamFolder: scratch.url.appendingPathComponent("pam.d"))
    let findings = EnvironmentChecks.run(context)
    return try #require(findings.first { $0.check == id })
}

/// A private home with the expected layout inside `scratch`.
private func privateHome(in scratch: Scratch) throws -> URL {
    let home = try scratch.dir("home")
    try scratch.file("home/keychain.db", "x")
    try scratch.file("home/keychain.db-wal", "x")
    try scratch.dir("home/backups")
    try scratch.file("home/backups/one.tresorbackup", "x")
    return home
}

@Suite("Environment checks")
struct EnvironmentCheckTests {
    @Test func privateHomeIsOK() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        let result = try finding("home-permissions", home: home, scratch: scratch)
        #expect(result.severity == .ok, "\(result.summary)")
    }

    @Test func exposedEntriesInHomeAreProblemsNamed() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        try scratch.file("home/readable.db", "x", mode: 0o644)
        try scratch.dir("home/open", mode: 0o755)
        let result = try finding("home-permissions", home: home, scratch: scratch)
        #expect(result.severity == .problem)
        #expect(result.summary.contains("readable.db (0644, want 0600)"), "\(result.summary)")
        #expect(result.summary.contains("open/ (0755, want 0700)"), "\(result.summary)")
        #expect(!result.summary.contains("keychain.db "), "private files are not named: \(result.summary)")
    }

    @Test func aSymbolicLinkInTheHomeIsAProblemNamed() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        let outside = try scratch.file("elsewhere.db", "x", mode: 0o600)
        try FileManager.default.createSymbolicLink(at: home.appendingPathComponent("linked.db"), withDestinationURL: outside)
        let result = try finding("home-permissions", home: home, scratch: scratch)
        #expect(result.severity == .problem)
        #expect(result.summary.contains("linked.db (unexpected symbolic link)"), "\(result.summary)")
    }

    @Test func homeWithWrongModeIsProblem() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        chmod(home.path, 0o750)
        let result = try finding("home-permissions", home: home, scratch: scratch)
        #expect(result.severity == .problem)
        #expect(result.summary.contains("0750"))
    }

    @Test func missingHomeIsWarning() throws {
        let scratch = try Scratch()
        let result = try finding("home-permissions", home: scratch.url.appendingPathComponent("nope"), scratch: scratch)
        #expect(result.severity == .warning)
        #expect(result.summary.contains("tresor init"))
    }

    @Test func attachedTracerIsProblemNamingPid() throws {
        let scratch = try Scratch()
        try scratch.file("proc/self/status", "Name:\ttresord\nState:\tS (sleeping)\nTracerPid:\t1234\nUid:\t1000\n", mode: 0o644)
        let result = try finding("tracer", home: scratch.url, scratch: scratch)
        #expect(result.severity == .problem)
        #expect(result.summary.contains("1234"))

        try scratch.file("proc/self/status", "Name:\ttresord\nTracerPid:\t0\n", mode: 0o644)
        #expect(try finding("tracer", home: scratch.url, scratch: scratch).severity == .ok)
    }

    @Test func linkerVariables() throws {
        let scratch = try Scratch()
        let preload = try finding("ld-preload", home: scratch.url, scratch: scratch, environment: ["LD_PRELOAD": "/tmp/evil.so"])
        #expect(preload.severity == .problem)
        #expect(preload.summary.contains("LD_PRELOAD"))
        let audit = try finding("ld-preload", home: scratch.url, scratch: scratch, environment: ["LD_AUDIT": "/tmp/a.so"])
        #expect(audit.severity == .problem)
        let path = try finding("ld-preload", home: scratch.url, scratch: scratch, environment: ["LD_LIBRARY_PATH": "/opt/lib"])
        #expect(path.severity == .warning)
        let clean = try finding("ld-preload", home: scratch.url, scratch: scratch, environment: ["PATH": "/usr/bin"])
        #expect(clean.severity == .ok)
    }

    @Test func ptraceScope() throws {
        let scratch = try Scratch()
        #expect(try finding("ptrace-scope", home: scratch.url, scratch: scratch).severity == .warning, "missing Yama")
        try scratch.file("proc/sys/kernel/yama/ptrace_scope", "0\n", mode: 0o644)
        #expect(try finding("ptrace-scope", home: scratch.url, scratch: scratch).severity == .warning)
        try scratch.file("proc/sys/kernel/yama/ptrace_scope", "1\n", mode: 0o644)
        #expect(try finding("ptrace-scope", home: scratch.url, scratch: scratch).severity == .ok)
    }

    @Test func swap() throws {
        let scratch = try Scratch()
        let header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .ok, "no swaps file")

        try scratch.file("proc/swaps", header, mode: 0o644)
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .ok, "header only")

        try scratch.file("proc/swaps", header + "/dev/sda2                               partition\t8388604\t\t0\t\t-2\n", mode: 0o644)
        let plain = try finding("swap", home: scratch.url, scratch: scratch)
        #expect(plain.severity == .warning)
        #expect(plain.summary.contains("unencrypted swap"))
        #expect(plain.summary.contains("/dev/sda2"))

        try scratch.file("proc/swaps", header + "/dev/zram0                              partition\t4194300\t\t0\t\t100\n", mode: 0o644)
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .ok)

        try scratch.file("proc/swaps", header + "/dev/dm-0                               partition\t8388604\t\t0\t\t-2\n", mode: 0o644)
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .warning, "dm-0 without a crypt uuid")
        try scratch.file("sys/block/dm-0/dm/uuid", "CRYPT-PLAIN-cryptswap\n", mode: 0o644)
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .ok)

        // A mix: one unencrypted area is enough for a warning.
        try scratch.file("proc/swaps", header + "/dev/dm-0 partition 1 0 -2\n/dev/sdb1 partition 1 0 -3\n", mode: 0o644)
        let mixed = try finding("swap", home: scratch.url, scratch: scratch)
        #expect(mixed.severity == .warning)
        #expect(mixed.summary.contains("/dev/sdb1") && !mixed.summary.contains("dm-0"))
    }

    @Test func swapOnLVMOverCryptIsOK() throws {
        let scratch = try Scratch()
        try scratch.file("proc/swaps", "Filename Type Size Used Priority\n/dev/mapper/vg-swap partition 1 0 -2\n", mode: 0o644)
        try scratch.file("sys/block/dm-1/dm/name", "vg-swap\n", mode: 0o644)
        try scratch.file("sys/block/dm-1/dm/uuid", "LVM-abc\n", mode: 0o644)
        try scratch.dir("sys/block/dm-1/slaves/dm-0")
        try scratch.file("sys/block/dm-0/dm/uuid", "CRYPT-LUKS2-0123-luks\n", mode: 0o644)
        #expect(try finding("swap", home: scratch.url, scratch: scratch).severity == .ok)
    }

    @Test func worldWritableExecutableIsProblem() throws {
        let scratch = try Scratch()
        let tool = try scratch.file("bin/tresord", "#!/bin/sh\n", mode: 0o777)
        let result = try finding("writable-executables", home: scratch.url, scratch: scratch, executables: [tool])
        #expect(result.severity == .problem)
        #expect(result.summary.contains(tool.path))
    }

    @Test func groupWritableFolderAboveExecutableIsProblem() throws {
        let scratch = try Scratch()
        let tool = try scratch.file("bin/tresor", "#!/bin/sh\n", mode: 0o755)
        chmod(tool.deletingLastPathComponent().path, 0o775)
        let result = try finding("writable-executables", home: scratch.url, scratch: scratch, executables: [tool])
        #expect(result.severity == .problem)
        #expect(result.summary.contains("/bin (mode 0775"), "\(result.summary)")
    }

    @Test func privateExecutableIsOK() throws {
        let scratch = try Scratch()
        let tool = try scratch.file("bin/tresor", "#!/bin/sh\n", mode: 0o755)
        let result = try finding("writable-executables", home: scratch.url, scratch: scratch, executables: [tool])
        #expect(result.severity == .ok, "\(result.summary)")
    }

    @Test func notRootIsOKForRegularUser() throws {
        let scratch = try Scratch()
        let result = try finding("running-as-root", home: scratch.url, scratch: scratch)
        #expect(result.severity == (geteuid() == 0 ? .warning : .ok))
    }

    @Test func rootForUserHomeIsProblem() throws {
        let scratch = try Scratch()
        let home = try scratch.dir("home")
        // Give the home to a normal user: as root chown it to nobody, otherwise it is already ours.
        if geteuid() == 0 { #expect(chown(home.path, 65534, 65534) == 0) }
        let context = EnvironmentCheckContext(home: home, executables: [], userID: 0)
        let result = try #require(EnvironmentChecks.run(context).first { $0.check == "running-as-root" })
        #expect(result.severity == .problem)
        #expect(result.summary.contains("owned by uid"))
    }

    /// Only root can make a root-owned home.
    @Test(.enabled(if: geteuid() == 0)) func rootForRootHomeIsWarning() throws {
        let scratch = try Scratch()
        let context = EnvironmentCheckContext(home: try scratch.dir("home"), executables: [], userID: 0)
        let result = try #require(EnvironmentChecks.run(context).first { $0.check == "running-as-root" })
        #expect(result.severity == .warning)
        #expect(result.reason.contains("normal user"))
    }

    /// A keybag linked to the login password with pam_tresor in no PAM service is unlocked by no
    /// login: said, until a service names the module (a commented-out line does not count).
    @Test func aLoginLinkWithoutTheModuleIsAWarning() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        #expect(try finding("login-module", home: home, scratch: scratch).severity == .ok, "not linked: nothing to say")
        try scratch.file("home/login-link", "x")
        try scratch.file("pam.d/common-auth", "auth [success=1 default=ignore] pam_unix.so\n# auth optional pam_tresor.so\n", mode: 0o644)
        let missing = try finding("login-module", home: home, scratch: scratch)
        #expect(missing.severity == .warning && missing.reason.contains("scripts/install-pam"), "\(missing)")
        try scratch.file("pam.d/common-session", "session optional pam_tresor.so\n", mode: 0o644)
        let installed = try finding("login-module", home: home, scratch: scratch)
        #expect(installed.severity == .ok && installed.summary == "pam_tresor is in common-session", "\(installed)")
    }

    @Test func realRunReportsEveryCheckOnce() throws {
        let scratch = try Scratch()
        let findings = EnvironmentChecks.run(EnvironmentCheckContext(home: try privateHome(in: scratch)))
        let ids = findings.map(\.check)
        let expected = [
            "home-permissions", "device-key-permissions", "running-as-root", "core-dumps", "tracer",
            "ld-preload", "ptrace-scope", "writable-executables", "swap", "login-module",
        ]
        #expect(Set(ids) == Set(expected))
        #expect(ids.count == expected.count)
        #expect(EnvironmentChecks.checkIDs == ids)
        #expect(findings.allSatisfy { !$0.summary.isEmpty && !$0.reason.isEmpty && !$0.summary.contains("\n") })
        #expect(findings.first { $0.check == "home-permissions" }?.severity == .ok)
    }

    /// The device key lives outside the home: its folder and file are checked on their own.
    @Test func theDeviceKeyMustBePrivate() throws {
        let scratch = try Scratch()
        let home = try privateHome(in: scratch)
        func check(_ key: URL?) -> EnvironmentFinding {
            EnvironmentChecks.run(EnvironmentCheckContext(home: home, deviceKey: key, executables: [])).first {
                $0.check == "device-key-permissions"
            }!
        }
        let key = try scratch.file("state/tresor/device.key", "k", mode: 0o600)
        try scratch.dir("state/tresor")
        #expect(check(key).severity == .ok)
        #expect(check(nil).severity == .ok, "no location, nothing to check")
        #expect(check(scratch.url.appendingPathComponent("state/tresor/missing.key")).severity == .warning)
        chmod(key.path, 0o644)
        #expect(check(key).severity == .problem)
        #expect(check(key).summary.contains("0644"))
        chmod(key.path, 0o600)
        chmod(key.deletingLastPathComponent().path, 0o755)
        #expect(check(key).severity == .problem, "a folder others can list")
        chmod(key.deletingLastPathComponent().path, 0o700)
        let link = scratch.url.appendingPathComponent("state/tresor/link.key")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: key)
        #expect(check(link).severity == .problem, "a link could point the key anywhere")
        // A home with a keybag and no device key opens nothing: a problem, and not "run tresor init".
        try Data("keybag".utf8).write(to: home.appendingPathComponent("keybag"))
        let lost = check(scratch.url.appendingPathComponent("state/tresor/missing.key"))
        #expect(lost.severity == .problem && !lost.summary.contains("tresor init"), "\(lost.summary)")
    }

    @Test func findingsRoundTripThroughJSON() throws {
        let finding = EnvironmentFinding(check: "swap", severity: .warning, summary: "s", reason: "r")
        let data = try JSONEncoder().encode(finding)
        #expect(String(decoding: data, as: UTF8.self).contains("\"warning\""))
        #expect(try JSONDecoder().decode(EnvironmentFinding.self, from: data) == finding)
    }

    @Test func disclaimerSaysChecksCanBeLiedTo() {
        #expect(EnvironmentChecks.disclaimer.contains("compromised"))
        #expect(EnvironmentChecks.disclaimer.contains("lie"))
    }
}
