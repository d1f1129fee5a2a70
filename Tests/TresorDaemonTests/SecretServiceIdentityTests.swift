import Foundation
import Testing
import TresorKeybag
import TresorKeychain

@testable import TresorDaemon

/// How the daemon names a Secret Service client's executable, and which processes it refuses.
@Suite struct SecretServiceIdentityTests {
    private let hash = Data(repeating: 0xAB, count: 32)

    @Test func aSystemProgramIsKnownByItsPathAndAnyOtherByItsHash() throws {
        // /usr/bin/env: root's file in root's folders, as every distribution installs it
        // (`SystemFiles.isSystemOwned`, SystemFilesTests).
        #expect(SecretServiceIdentities.group(path: "/usr/bin/env", sha256: hash, uid: 1000) == "exe:/usr/bin/env")
        // A daemon running as root can write every file: nothing is trusted by path then.
        #expect(SecretServiceIdentities.group(path: "/usr/bin/env", sha256: hash, uid: 0) == "exe-sha256:" + String(repeating: "ab", count: 32))
        // A file in a folder others may write (/tmp is 1777) is known by its hash.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ident-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("env")
        try FileManager.default.copyItem(atPath: "/usr/bin/env", toPath: copy.path)
        #expect(SecretServiceIdentities.group(path: copy.path, sha256: hash, uid: 1000).hasPrefix("exe-sha256:"))
        // A link is not the file: it could be repointed.
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/usr/bin/env")
        #expect(SecretServiceIdentities.group(path: link.path, sha256: hash, uid: 1000).hasPrefix("exe-sha256:"))
    }

    /// A fake /proc with one process whose status and environment the test writes.
    private func fakeProc(status: String, environment: [String]) throws -> (root: URL, identities: SecretServiceIdentities) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID().uuidString.prefix(8))")
        let process = root.appendingPathComponent("4242")
        try FileManager.default.createDirectory(at: process, withIntermediateDirectories: true)
        try status.write(to: process.appendingPathComponent("status"), atomically: true, encoding: .utf8)
        try Data(environment.map { $0 + "\0" }.joined().utf8).write(to: process.appendingPathComponent("environ"))
        let keychains = KeychainProvider(
            slot: KeybagSlot(paths: .init(home: root.appendingPathComponent("home").path), settings: .insecureForTesting(kdfRounds: 1)),
            settings: .insecureForTesting(kdfRounds: 1))
        return (root, SecretServiceIdentities(keychains: keychains, uid: 1000, procRoot: root.path))
    }

    @Test func aTracedProcessOrOneStartedWithALoaderVariableIsRefused() throws {
        let clean = try fakeProc(status: "Name:\tsecret-tool\nTracerPid:\t0\n", environment: ["HOME=/home/ada", "LD_LIBRARY_PATHX=1"])
        defer { try? FileManager.default.removeItem(at: clean.root) }
        try clean.identities.refuseBorrowedProcess(4242)

        let traced = try fakeProc(status: "Name:\tsecret-tool\nTracerPid:\t777\n", environment: ["HOME=/home/ada"])
        defer { try? FileManager.default.removeItem(at: traced.root) }
        #expect(throws: KeychainError.missingEntitlement("the calling process is being traced")) { try traced.identities.refuseBorrowedProcess(4242) }

        for variable in ["LD_PRELOAD", "LD_AUDIT"] {
            let preloaded = try fakeProc(status: "TracerPid:\t0\n", environment: ["A=1", "\(variable)=/tmp/evil.so"])
            defer { try? FileManager.default.removeItem(at: preloaded.root) }
            #expect(throws: KeychainError.missingEntitlement("the calling process was started with \(variable)")) {
                try preloaded.identities.refuseBorrowedProcess(4242)
            }
        }
    }

    /// What a "for this session" approval remembers beside the executable: each ancestor's own
    /// group, by the same rules, the parent first.
    @Test func theParentChainNamesEachAncestorByItsOwnGroup() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString.prefix(8))").path
        let keychains = KeychainProvider(
            slot: KeybagSlot(paths: .init(home: home), settings: .insecureForTesting(kdfRounds: 1)), settings: .insecureForTesting(kdfRounds: 1))
        let identities = SecretServiceIdentities(keychains: keychains, uid: getuid())
        let chain = identities.parentChain(of: getpid())
        // A session whose leader is outside this pid namespace (a CI container) cannot be read.
        let leaderVisible = getsid(0) > 0 && FileManager.default.isReadableFile(atPath: "/proc/\(getsid(0))/stat")
        #expect(chain.last?.hasPrefix(leaderVisible ? "session:\(getsid(0))@" : "session:unknown") == true, "the login session last: \(chain)")
        guard getsid(0) != getpid() else { return #expect(chain.count == 1) }
        let parent = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(getppid())/exe")
        let parentHash = try FileHashes.shared.sha256(of: URL(fileURLWithPath: parent))
        #expect(chain.first == SecretServiceIdentities.group(path: parent, sha256: parentHash, uid: getuid()), "the parent first: \(chain)")
        #expect(chain.dropLast().allSatisfy { $0.hasPrefix("exe") || $0 == SecretServiceIdentities.unreadableAncestor })
    }
}
