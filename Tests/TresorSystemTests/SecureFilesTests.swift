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

    /// A FIFO, a device or a folder where a file is read is refused at once: a FIFO had held
    /// the reading thread until some writer came (a daemon thread, for a backup's path).
    @Test(.timeLimit(.minutes(1))) func onlyRegularFilesAreRead() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-files-\(UUID().uuidString)")
        try SecureFiles.createDirectory(root)
        defer { try? FileManager.default.removeItem(at: root) }
        let fifo = root.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        for url in [fifo, URL(fileURLWithPath: "/dev/zero"), root] {
            #expect(throws: SecureFileError.notAFile(path: url.path)) { try SecureFiles.read(url, limit: 1024) }
            #expect(throws: SecureFileError.notAFile(path: url.path)) { try SecureFiles.withReader(url, limit: 1024) { _ in } }
        }
        let file = root.appendingPathComponent("file")
        try SecureFiles.writeAtomically(Data("kept".utf8), to: file)
        #expect(try SecureFiles.read(file, limit: 1024) == Data("kept".utf8))
        #expect(try SecureFiles.withReader(file, limit: 1024) { try $0.read(count: 4) } == Data("kept".utf8))
    }

    /// The piece-by-piece writer of attachments: private, exclusive, complete; and a write that
    /// fails half-way leaves no file behind.
    @Test func piecewiseCreationIsExclusiveAndLeavesNothingWhenItFails() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-files-\(UUID().uuidString)")
        try SecureFiles.createDirectory(root)
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("f")
        let big = Data((0..<(1 << 20) + 3).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let writer = try ExclusiveFile(creating: file)
        try writer.append(Data("head".utf8))
        try writer.append(big)
        try writer.append(Data())
        #expect(writer.size == 4 + big.count)
        try writer.commit()
        #expect(throws: SecureFileError.self, "a committed file takes no more bytes") { try writer.append(big) }
        #expect(try SecureFiles.read(file, limit: 1 << 21) == Data("head".utf8) + big)
        #expect(try mode(file.path) == 0o600)
        #expect(throws: SecureFileError.self) { try ExclusiveFile(creating: file) }
        #expect(throws: SecureFileError.self) { try SecureFiles.createExclusively(Data("x".utf8), at: file) }
        #expect(try SecureFiles.read(file, limit: 1 << 21) == Data("head".utf8) + big, "an existing file is never touched")
        try SecureFiles.withReader(file, limit: 1 << 21) { (reader: inout SecureFiles.SequentialReader) throws in
            #expect(reader.size == 4 + big.count)
            #expect(try reader.read(count: 4) == Data("head".utf8))
            #expect(try reader.read(count: big.count) == big)
            #expect(throws: SecureFileError.self) { try reader.read(count: 1) }
        }
        #expect(throws: SecureFileError.tooLarge(path: file.path, limit: 10)) { try SecureFiles.withReader(file, limit: 10) { _ in } }

        let abandoned = root.appendingPathComponent("g")
        let partial = try ExclusiveFile(creating: abandoned)
        try partial.append(big)
        partial.abandon()
        #expect(!SecureFiles.exists(abandoned), "an abandoned write leaves no partial file")
        #expect(throws: SecureFileError.self) { try partial.commit() }

        // A header known only at the end: kept at the start, appended after, filled last.
        let headed = root.appendingPathComponent("i")
        let withPrefix = try ExclusiveFile(creating: headed, reservingPrefix: 5)
        #expect(withPrefix.size == 5)
        try withPrefix.append(big)
        try withPrefix.writePrefix(Data("first".utf8))
        try withPrefix.commit()
        #expect(try SecureFiles.read(headed, limit: 1 << 21) == Data("first".utf8) + big)

        let dropped = root.appendingPathComponent("h")
        do {
            let writer = try ExclusiveFile(creating: dropped)
            try writer.append(big)
        }
        #expect(!SecureFiles.exists(dropped), "a writer dropped without a commit leaves no file")
    }

    /// A file made with `creatingOnCommit` is nowhere at its name until committed whole, and its
    /// commit never replaces a file that came to that name meanwhile.
    @Test func aFileCreatedOnCommitAppearsOnlyWholeAndReplacesNothing() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-files-\(UUID().uuidString)")
        try SecureFiles.createDirectory(root)
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("export.bin")
        let writer = try ExclusiveFile(creatingOnCommit: file)
        try writer.append(Data("part".utf8))
        #expect(!SecureFiles.exists(file), "a file being written is not at its name")
        try writer.append(Data(" two".utf8))
        try writer.commit()
        #expect(try SecureFiles.read(file, limit: 100) == Data("part two".utf8))
        #expect(try mode(file.path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["export.bin"], "no temporary file left")

        let late = try ExclusiveFile(creatingOnCommit: file)
        try late.append(Data("newer".utf8))
        #expect(throws: SecureFileError.systemCall("rename", path: file.path, errno: EEXIST)) { try late.commit() }
        #expect(try SecureFiles.read(file, limit: 100) == Data("part two".utf8), "a file at the name is never replaced")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["export.bin"], "the refused file is removed")

        let abandoned = try ExclusiveFile(creatingOnCommit: root.appendingPathComponent("cut.bin"))
        try abandoned.append(Data("cut".utf8))
        abandoned.abandon()
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == ["export.bin"])
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

    /// A symbolic link put where the home keeps a file redirects no write and no read: an atomic
    /// write replaces the link itself, an append, an overwrite-and-remove and a read refuse it or
    /// remove only the link, and the file it points to is left as it was.
    @Test func aSymbolicLinkRedirectsNoWriteOrRead() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-links-\(UUID().uuidString)")
        try SecureFiles.createDirectory(root)
        defer { try? FileManager.default.removeItem(at: root) }
        let outside = root.appendingPathComponent("outside")
        let original = Data("someone else's file".utf8)
        try original.write(to: outside)
        func link(_ name: String) throws -> URL {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createSymbolicLink(at: url, withDestinationURL: outside)
            return url
        }
        func isLink(_ url: URL) -> Bool {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
        }

        let replaced = try link("keybag")
        try SecureFiles.writeAtomically(Data("new".utf8), to: replaced)
        #expect(!isLink(replaced), "the link itself is replaced")
        #expect(try SecureFiles.read(replaced, limit: 10) == Data("new".utf8))

        let appended = try link("journal")
        #expect(throws: SecureFileError.self) { try SecureFiles.append(Data("more".utf8), to: appended, after: 0) }

        let read = try link("attempts")
        #expect(throws: SecureFileError.self) { try SecureFiles.read(read, limit: 100) }

        let removed = try link("sealed")
        SecureFiles.overwriteAndRemove(removed)
        #expect(!FileManager.default.fileExists(atPath: removed.path) && !isLink(removed), "the link is removed")

        #expect(try Data(contentsOf: outside) == original, "a write went through a link")
    }
}
