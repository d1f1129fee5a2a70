import Foundation
import Testing
import TresorSystem

/// Which files only root can have put where they are.
@Suite struct SystemFilesTests {
    @Test func aFileInRootsFoldersIsSystemOwnedAndACopyALinkOrAMissingFileIsNot() throws {
        // /usr/bin/env: root's file in root's folders, as every distribution installs it.
        #expect(SystemFiles.isSystemOwned("/usr/bin/env"))
        // A file in a folder others may write (/tmp is 1777).
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("system-files-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("env")
        try FileManager.default.copyItem(atPath: "/usr/bin/env", toPath: copy.path)
        #expect(!SystemFiles.isSystemOwned(copy.path))
        // A link is not the file: it could be repointed.
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/usr/bin/env")
        #expect(!SystemFiles.isSystemOwned(link.path))
        // Root's folder itself is not an executable file.
        #expect(!SystemFiles.isSystemOwned("/usr/bin"))
        #expect(!SystemFiles.isSystemOwned("relative/path"))
        #expect(!SystemFiles.isSystemOwned("/usr/bin/no-such-program-here"))
    }
}
