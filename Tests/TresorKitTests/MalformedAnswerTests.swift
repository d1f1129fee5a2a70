import Foundation
import Testing
import TresorKit
import TresorSystem

/// TresorKit against a socket that answers with bytes no daemon sends: a clear
/// `TresorClientError`, never a crash (the `http-response` fuzz target's regressions, as tests).
@Suite struct MalformedAnswerTests {
    /// Serves `answer` to the first connection on `paths.socket`, then closes it.
    func serve(_ answer: String, at paths: TresorPaths) throws {
        try SecureFiles.createDirectory(paths.socket.deletingLastPathComponent())
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(UnixSockets.bind(listener, to: paths.socket.path) == 0 && listen(listener, 1) == 0)
        Thread.detachNewThread {
            let connection = accept(listener, nil, nil)
            var scratch = [UInt8](repeating: 0, count: 4096)
            _ = recv(connection, &scratch, scratch.count, 0)
            _ = Array(answer.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
            close(listener)
        }
    }

    /// A `Content-Length` of `Int.max`: the client used to reserve a buffer of that size and trap.
    @Test func aHugeContentLengthIsAClearErrorNotACrash() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-answer-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = TresorPaths(home: root.appendingPathComponent("home").path, environment: ["XDG_RUNTIME_DIR": root.path])
        try serve("HTTP/1.1 200 OK\r\nContent-Length: \(Int.max)\r\n\r\n{}", at: paths)
        let client = try TresorClient.connect(paths: paths, startDaemon: false)
        #expect(throws: TresorClientError.self) { try client.status() }
    }
}
