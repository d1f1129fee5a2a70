import Foundation
import Testing
import TresorSystem

@Suite struct InterruptedWriteTests {
    /// A daemon killed between writing a temporary file and renaming it leaves the temporary
    /// behind; the next daemon removes it (it may hold an unacknowledged keybag).
    @Test func temporariesOfInterruptedWritesAreRemoved() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-tmp-\(UUID().uuidString)")
        try SecureFiles.createDirectory(folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        try SecureFiles.writeAtomically(Data("kept".utf8), to: folder.appendingPathComponent("keybag"))
        try Data("half".utf8).write(to: folder.appendingPathComponent(".keybag.tmp-4242"))
        try Data("x".utf8).write(to: folder.appendingPathComponent(".hidden-but-not-temporary"))
        #expect(SecureFiles.removeInterruptedWrites(in: folder) == [".keybag.tmp-4242"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [".hidden-but-not-temporary", "keybag"])
    }
}
