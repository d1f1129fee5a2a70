import Foundation
import Testing
import TresorCrypto

@testable import TresorDaemon

/// A registered binary is known by its hash, and hashes are cached by the file's identity: a
/// binary edited in place — same size, its modification time set back — must not keep the hash
/// of what it was (docs/SECURITY.md, "Applications using TresorKit").
struct FileHashesTests {
    @Test func aFileEditedInPlaceWithItsTimeSetBackIsHashedAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-hashes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("app")
        let original = Data("the registered program".utf8), edited = Data("the edited program!!!!".utf8)
        #expect(original.count == edited.count)
        try original.write(to: file)
        let hashes = FileHashes()
        #expect(try hashes.sha256(of: file) == Digest.sha256(original))

        var before = stat()
        #expect(stat(file.path, &before) == 0)
        // Later (the kernel's file times move by its clock tick): rewritten in place, same inode
        // and size, then its modification time put back.
        usleep(50_000)
        let fd = open(file.path, O_WRONLY)
        #expect(fd >= 0)
        _ = edited.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        var times = [before.st_atim, before.st_mtim]
        #expect(futimens(fd, &times) == 0)
        close(fd)
        var after = stat()
        #expect(stat(file.path, &after) == 0)
        #expect(after.st_ino == before.st_ino && after.st_size == before.st_size)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)

        #expect(try hashes.sha256(of: file) == Digest.sha256(edited), "the cached hash of the file before its edit was served")
    }
}
