import Foundation
import Testing
import TresorAge
import TresorCrypto
import TresorTestSupport

/// The reference implementation, Debian's `age`, opens Tresor's files and Tresor opens its
/// files. `age` reads passphrases only from a terminal, so a Python `pty` drives it; the
/// passphrase reaches Python on stdin, never on a command line.
private let debianAge = "/usr/bin/age"

@Suite(.blocksItsThread, .enabled(if: FileManager.default.isExecutableFile(atPath: debianAge), "needs Debian's age (scripts/test installs it)"))
struct AgeInteroperabilityTests {
    static let age = debianAge
    static let passphrase = "tresor ⇄ age interop"

    @Test(arguments: [0, 5, 65_536, 200_000])
    func ageOpensTresorsFiles(size: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let encrypted = directory.appendingPathComponent("tresor.age")
        try AgeFile.encrypt(plaintext, passphrase: SecretText(Self.passphrase), workFactor: 10).write(to: encrypted)
        let decrypted = directory.appendingPathComponent("out")
        try Self.runAge(["-d", "-o", decrypted.path, encrypted.path])
        // age creates its output file at the first byte it writes: none for an empty file.
        let output = FileManager.default.fileExists(atPath: decrypted.path) ? try Data(contentsOf: decrypted) : Data()
        #expect(output == plaintext)
    }

    @Test func tresorOpensAgesFiles() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plaintext = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 * 13) })
        let input = directory.appendingPathComponent("in")
        try plaintext.write(to: input)
        let encrypted = directory.appendingPathComponent("made-by-age.age")
        try Self.runAge(["-p", "-o", encrypted.path, input.path])
        let file = try Data(contentsOf: encrypted)
        #expect(try AgeFile.decrypt(file, passphrase: SecretText(Self.passphrase)) == plaintext)
        #expect(throws: AgeError.wrongPassphrase) { try AgeFile.decrypt(file, passphrase: SecretText("not it")) }
    }

    @Test func ageRefusesATresorFileWithAChangedChunk() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var file = try AgeFile.encrypt(Data(count: 1000), passphrase: SecretText(Self.passphrase), workFactor: 10)
        file[file.count - 20] ^= 1
        let encrypted = directory.appendingPathComponent("changed.age")
        try file.write(to: encrypted)
        #expect(throws: (any Error).self) { try Self.runAge(["-d", "-o", directory.appendingPathComponent("out").path, encrypted.path]) }
    }

    /// Runs `age` with `arguments` in a pseudo-terminal, typing the passphrase at each prompt.
    static func runAge(_ arguments: [String]) throws {
        let screen = try Terminal.run([age] + arguments, prompts: [Terminal.Prompt(endingWith: ":", containing: "passphrase", send: passphrase)])
        guard screen.status == 0 else { throw AgeRunFailed(status: screen.status, transcript: screen.text) }
    }

    struct AgeRunFailed: Error, CustomStringConvertible {
        var status: Int32
        var transcript: String
        var description: String { "age exited \(status): \(transcript)" }
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-age-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
