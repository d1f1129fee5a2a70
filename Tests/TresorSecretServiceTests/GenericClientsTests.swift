import Foundation
import Testing
import TresorCrypto
import TresorSystem

@testable import TresorSecretService

/// Which programs are generic clients (docs/SECURITY.md, "Generic clients"), and the parent
/// chain a "for this session" approval remembers.
@Suite struct GenericClientsTests {
    @Test func aNameOfTheTableAloneOrWithAVersionIsAGenericClient() {
        let table = GenericClients()
        let none = Data()
        let generic = [
            "/usr/bin/python3.11", "/usr/bin/python3", "/usr/bin/perl5.36.0", "/bin/sh", "/usr/bin/secret-tool", "/tmp/x/git-credential-libsecret",
            "/usr/bin/node18",
        ]
        for path in generic {
            #expect(table.contains(path: path, sha256: none), "\(path)")
        }
        for path in ["/usr/bin/ssh", "/usr/bin/python3-config", "/usr/local/lib/keeper", "/usr/bin/chromium", "/usr/bin/3", "/usr/bin/shred"] {
            #expect(!table.contains(path: path, sha256: none), "\(path)")
        }
        #expect(GenericClients(extra: ["my-vault-cli"]).contains(path: "/opt/bin/my-vault-cli", sha256: none))
        #expect(!GenericClients(extra: ["/opt/bin/my-vault-cli", ""]).names.contains(""), "a path or nothing names no program")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/dash"), "needs /bin/dash"))
    func aRenamedCopyOfAnInstalledGenericClientIsOneByItsHash() throws {
        let table = GenericClients { try Data(Digest.sha256(Data(contentsOf: $0))) }
        let dash = try Data(Digest.sha256(Data(contentsOf: URL(fileURLWithPath: "/bin/dash"))))
        #expect(table.contains(path: "/tmp/innocent-name", sha256: dash), "a renamed dash is still a shell")
        #expect(!table.contains(path: "/tmp/innocent-name", sha256: Data(repeating: 7, count: 32)))
    }

    @Test func theParentChainRunsUpToTheSessionLeader() throws {
        let chain = ProcessAncestors.of(getpid())
        if getsid(0) == getpid() {
            #expect(chain.isEmpty, "a session's leader has no ancestor in it")
        } else {
            #expect(chain.first == getppid(), "the parent first")
        }
        #expect(!chain.contains(1) && chain.count <= ProcessAncestors.limit)
        #expect(Set(chain).count == chain.count, "no process twice")
        #expect(ProcessAncestors.of(Int32.max).isEmpty, "no such process: no chain")
    }
}
