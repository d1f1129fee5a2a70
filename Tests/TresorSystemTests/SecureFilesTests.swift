import Foundation
import Testing
import TresorSystem

@Suite struct SecureFilesTests {
    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1) & 0o777
    }

    /// Creating a home below existing folders must not tighten them: run as root with
    /// `--home /tmp/x/home`, an earlier version made /tmp itself 0700.
    @Test func existingParentsKeepTheirModes() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
        let home = root.appendingPathComponent("a/b/home")
        try SecureFiles.createDirectory(home)
        #expect(try mode(root.path) == 0o755, "an existing parent was changed")
        #expect(try mode(root.appendingPathComponent("a").path) == 0o700, "a parent Tresor creates is private")
        #expect(try mode(home.path) == 0o700)
        chmod(home.path, 0o755)
        try SecureFiles.createDirectory(home)
        #expect(try mode(home.path) == 0o700, "the home itself is tightened")
    }

    @Test func atomicWritesArePrivateAndReplaceWholly() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-files-\(UUID().uuidString)")
        try SecureFiles.createDirectory(root)
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("f")
        try SecureFiles.writeAtomically(Data("first".utf8), to: file)
        try SecureFiles.writeAtomically(Data("second".utf8), to: file)
        #expect(try SecureFiles.read(file, limit: 100) == Data("second".utf8))
        #expect(try mode(file.path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["f"], "no temporary file left")
        #expect(throws: SecureFileError.tooLarge(path: file.path, limit: 3)) { try SecureFiles.read(file, limit: 3) }
        #expect(throws: SecureFileError.notFound(path: root.appendingPathComponent("none").path)) {
            try SecureFiles.read(root.appendingPathComponent("none"), limit: 3)
        }
    }
}
