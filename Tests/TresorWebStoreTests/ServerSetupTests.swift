import Foundation
import Testing

@testable import TresorWebStorePostgres

/// The server key file and the database URL, read at start (no database needed).
@Suite("Server setup")
struct ServerSetupTests {
    private func keyFile(bytes: Int, mode: mode_t) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("server-key-" + UUID().uuidString).path
        try #require(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: bytes)))
        chmod(path, mode)
        return path
    }

    @Test func aKeyFileOf32PrivateBytesIsRead() throws {
        let path = try keyFile(bytes: 32, mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try ServerKey(file: path)
    }

    @Test(arguments: [
        (31, 0o600 as mode_t, "31 bytes"), (33, 0o600, "33 bytes"), (0, 0o600, "0 bytes"), (32, 0o644, "chmod 600"), (32, 0o640, "chmod 600"),
    ])
    func aWrongKeyFileIsAClearError(bytes: Int, mode: mode_t, saying: String) throws {
        let path = try keyFile(bytes: bytes, mode: mode)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: ServerSetupError.self) { try ServerKey(file: path) }
        #expect("\(error)".contains(saying))
    }

    @Test func aMissingKeyFileSaysHowToMakeOne() throws {
        let error = try #require(throws: ServerSetupError.self) { try ServerKey(file: "/nonexistent/server.key") }
        #expect("\(error)".contains("head -c 32 /dev/urandom"))
    }

    @Test func theSameKeyFileGivesTheSameSealing() throws {
        let a = ServerSealing(serverKey: try ServerKey(bytes: Data(repeating: 1, count: 32)))
        let b = ServerSealing(serverKey: try ServerKey(bytes: Data(repeating: 1, count: 32)))
        let sealed = try a.sealText("a note's title", "notes", "n1", "title")
        #expect(try b.openText(sealed, "notes", "n1", "title") == "a note's title")
        #expect(throws: (any Error).self) { try b.openText(sealed, "notes", "n2", "title") }
        let other = ServerSealing(serverKey: try ServerKey(bytes: Data(repeating: 2, count: 32)))
        #expect(throws: (any Error).self) { try other.openText(sealed, "notes", "n1", "title") }
    }

    @Test func aDatabaseURLReadsAndNeverShowsItsPassword() throws {
        let url = try DatabaseURL(parsing: "postgres://tresor:p%40ss@db.example.com:6543/notes?sslmode=require")
        #expect(url.user == "tresor")
        #expect(url.password == "p@ss")
        #expect(url.host == "db.example.com")
        #expect(url.port == 6543)
        #expect(url.database == "notes")
        #expect(url.tls == .require)
        #expect(url.description == "postgres://tresor@db.example.com:6543/notes")
        #expect(DatabaseURL.hasPassword("postgres://tresor:x@h/d"))
        #expect(!DatabaseURL.hasPassword("postgres://tresor@h/d"))
        let socket = try DatabaseURL(parsing: "postgresql://tresor@localhost/notes?host=/run/postgresql")
        #expect(socket.socketDirectory == "/run/postgresql")
        #expect(try DatabaseURL(parsing: "postgres://tresor@h/d", environmentPassword: "env").password == "env")
    }

    @Test(arguments: [
        "mysql://u@h/d", "postgres://h/d", "postgres://u@h/", "postgres://u@h/d?sslmode=maybe", "postgres://u@h/d?options=x", "postgres://u@h:0/d",
    ])
    func aBadDatabaseURLIsRefused(text: String) {
        #expect(throws: ServerSetupError.self) { try DatabaseURL(parsing: text) }
    }
}
