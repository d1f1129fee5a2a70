import FoundationEssentials
import Testing

@testable import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The parents shown to a user asked about a process stop at the first process of another user:
/// a root process's command line is not theirs to be shown (nor to end up in a screenshot).
struct ProcessChainTests {
    /// A procfs of three processes: 300 and 200 of user 1000, 100 of root, each with its `stat`
    /// and `cmdline`.
    static func procRoot() throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID().uuidString.prefix(8))").path
        for (pid, parent, uid, command) in [
            (300, 200, 1000, "secret-tool"), (200, 100, 1000, "bash"), (100, 1, 0, "agent\u{0}--token=e2e-root-token"),
        ] {
            let folder = "\(root)/\(pid)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let stat = "\(pid) (x) S \(parent) \(pid) \(pid) 0 -1 " + Array(repeating: "0", count: 14).joined(separator: " ") + " 4242 0 0\n"
            try Data(stat.utf8).write(to: URL(fileURLWithPath: "\(folder)/stat"))
            try Data(command.utf8).write(to: URL(fileURLWithPath: "\(folder)/cmdline"))
            #expect(chown(folder, uid_t(uid), gid_t(uid)) == 0)
        }
        return root
    }

    @Test(.enabled(if: getuid() == 0, "making another user's process folder needs root")) func theChainStopsAtAnotherUsersProcess() throws {
        let root = try Self.procRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let chain = ProcessChain.of(pid: 300, procRoot: root)
        #expect(chain.map(\.pid) == [300, 200])
        #expect(chain.map(\.commandLine) == [["secret-tool"], ["bash"]])
        #expect(!chain.flatMap(\.commandLine).contains { $0.contains("e2e-root-token") })
    }
}
