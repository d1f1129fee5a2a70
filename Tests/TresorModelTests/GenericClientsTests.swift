import Foundation
import Testing
import TresorModel

/// Which programs are generic clients (docs/SECURITY.md, "Generic clients"): a name of the table
/// alone or with a version suffix, a name the user added, or a copy of an installed one — not a
/// name that only starts like one.
struct GenericClientsTests {
    @Test(arguments: [
        "/usr/bin/python3.11", "python3", "python", "/usr/bin/perl5.36.0", "perl", "pypy3", "/bin/bash", "/bin/sh", "dash",
        "node18", "lua5.4", "ruby3.1", "/usr/bin/gawk", "busybox", "tclsh8.6", "Rscript", "/usr/bin/secret-tool", "git",
        "/tmp/x/git-credential-libsecret", "git-credential-gnome-keyring",
    ])
    func interpretersAndSecretDispensersAreKnownByName(_ path: String) {
        #expect(GenericClients().contains(path: path, sha256: Data()))
    }

    @Test(arguments: [
        "ssh", "pythonic", "python3-config", "/usr/bin/env", "true", "/opt/app/shell-helper", "/usr/local/lib/keeper", "/usr/bin/chromium",
        "/usr/bin/3", "/usr/bin/shred", "git-upload-pack",
    ])
    func otherProgramsAreNot(_ path: String) {
        #expect(!GenericClients().contains(path: path, sha256: Data()))
    }

    @Test func theUserAddsNamesNeverPaths() {
        #expect(GenericClients(extra: ["my-vault-cli"]).contains(path: "/opt/bin/my-vault-cli", sha256: Data()))
        #expect(GenericClients(extra: ["my-vault-cli"]).contains(path: "/opt/bin/my-vault-cli2", sha256: Data()), "with a version")
        #expect(!GenericClients(extra: ["/opt/bin/my-vault-cli", ""]).names.contains(""), "a path or nothing names no program")
        #expect(!GenericClients(extra: ["/opt/bin/my-vault-cli"]).contains(path: "/opt/bin/my-vault-cli", sha256: Data()))
    }

    /// The table compares whatever its hash function gives; here a file's bytes stand in for its hash.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/dash"), "needs /bin/dash"))
    func aRenamedCopyOfAnInstalledGenericClientIsOneByItsHash() throws {
        let table = GenericClients { try Data(contentsOf: $0) }
        let dash = try Data(contentsOf: URL(fileURLWithPath: "/bin/dash"))
        #expect(table.contains(path: "/tmp/innocent-name", sha256: dash), "a renamed dash is still a shell")
        #expect(!table.contains(path: "/tmp/innocent-name", sha256: Data(repeating: 7, count: 32)))
    }
}
