import Foundation
import Testing
import TresorSystem

/// ``UnixSockets/bind(_:to:)`` and ``UnixSockets/connect(_:to:)``: a path up to the last byte a
/// socket address holds, refused one past it or with a NUL inside, and the kernel's own
/// failures passed on as their `errno`.
@Suite struct UnixSocketAddressTests {
    /// Runs `body` with a new folder, removed after.
    func inNewFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-sockets-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    /// A path in `folder` exactly `length` bytes long.
    func path(in folder: URL, ofLength length: Int) throws -> String {
        let prefix = folder.path + "/"
        try #require(prefix.utf8.count < length)
        return prefix + String(repeating: "s", count: length - prefix.utf8.count)
    }

    func socketDescriptor() -> Int32 { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }

    @Test func aPathOfTheLongestLengthIsBoundAndConnectedTo() throws {
        // `sun_path` holds 108 bytes, the last one the terminating NUL.
        try inNewFolder { folder in
            let path = try path(in: folder, ofLength: 107)
            let listener = socketDescriptor(), client = socketDescriptor()
            defer { close(listener); close(client) }
            #expect(UnixSockets.bind(listener, to: path) == 0)
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(listen(listener, 1) == 0)
            #expect(UnixSockets.connect(client, to: path) == 0)
            #expect(UnixSockets.peerAddress(ofConnected: client) == Array(path.utf8))
        }
    }

    @Test func aPathOneByteTooLongIsRefusedBeforeTheKernelSeesIt() throws {
        try inNewFolder { folder in
            let path = try path(in: folder, ofLength: 108)
            let fd = socketDescriptor()
            defer { close(fd) }
            #expect(UnixSockets.bind(fd, to: path) == ENAMETOOLONG)
            #expect(UnixSockets.connect(fd, to: path) == ENAMETOOLONG)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aPathWithANulByteIsRefusedNotCutShort() throws {
        try inNewFolder { folder in
            let shorter = folder.appendingPathComponent("socket").path
            let fd = socketDescriptor()
            defer { close(fd) }
            #expect(UnixSockets.bind(fd, to: shorter + "\0-and-more") == EINVAL)
            #expect(!FileManager.default.fileExists(atPath: shorter), "bound at the path before the NUL")
        }
    }

    @Test func theKernelsFailuresAreItsErrno() throws {
        try inNewFolder { folder in
            let missing = folder.appendingPathComponent("nobody-listens").path
            let taken = folder.appendingPathComponent("taken").path
            #expect(FileManager.default.createFile(atPath: taken, contents: Data()))
            let fd = socketDescriptor()
            defer { close(fd) }
            #expect(UnixSockets.connect(fd, to: missing) == ENOENT)
            #expect(UnixSockets.bind(fd, to: taken) == EADDRINUSE)
        }
    }
}
