import Foundation
import TresorKit
import TresorSystem

/// A throwaway `tresord` on a temporary home, initialised with a passcode, for test targets
/// outside EndToEndTests (whose `Harness` also records every command for its secret scan).
/// The daemon stops and the home goes when the fixture is released.
public final class TresordFixture {
    public let paths: TresorPaths
    public let environment: [String: String]
    public let passcode: String
    private let root: URL
    private let daemon: Process

    /// The environment that makes a debug `tresord` derive new keys with 1,000 PBKDF2 rounds
    /// instead of production's (`TresordCommand.daemon`; docs/ARCHITECTURE.md, "Tests").
    public static let cheapKeyDerivation = [DaemonEnvironment.debugKeyDerivationRounds: "1000"]

    /// The folder of the built executables (`tresord`, `tresor`, the examples): `$TRESOR_BIN_DIR`,
    /// else the nearest folder above the test runner that holds `tresord`.
    public static let binaries: URL = {
        if let explicit = ProcessInfo.processInfo.environment["TRESOR_BIN_DIR"] { return URL(fileURLWithPath: explicit) }
        let me = ProcessImage.ownExecutablePath ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: me).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("tresord").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory
    }()

    /// Starts the daemon at trace level (so that a secret it ever logged would be seen) and
    /// initialises the home with `passcode`.
    /// - Parameters:
    ///   - passcode: the home's passcode.
    ///   - daemonArguments: added to `tresord`'s command line (`--auto-lock 0`).
    ///   - configuration: the home's `config.json`, when given.
    /// - Throws: ``FixtureError`` when the daemon does not answer within 15 s or `tresor init` fails.
    public init(passcode: String, daemonArguments: [String] = [], configuration: String? = nil) throws {
        self.passcode = passcode
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-fixture-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("run"), withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment.merging(Self.cheapKeyDerivation) { $1 }
        environment["TRESOR_HOME"] = root.appendingPathComponent("home").path
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
        environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        self.environment = environment
        paths = TresorPaths(environment: environment)
        try SecureFiles.createDirectory(paths.daemonLog.deletingLastPathComponent())
        if let configuration {
            try SecureFiles.createDirectory(paths.home)
            try SecureFiles.writeAtomically(Data(configuration.utf8), to: paths.config)
        }
        _ = FileManager.default.createFile(atPath: paths.daemonLog.path, contents: nil, attributes: [.posixPermissions: 0o600])
        let log = try FileHandle(forWritingTo: paths.daemonLog)
        daemon = Process()
        daemon.executableURL = Self.binaries.appendingPathComponent("tresord")
        daemon.arguments = ["--home", paths.home.path, "--log-level", "trace"] + daemonArguments
        daemon.environment = environment
        daemon.standardOutput = log
        daemon.standardError = log
        try daemon.run()
        let deadline = Date().addingTimeInterval(15)
        while (try? TresorClient.connect(paths: paths, startDaemon: false)) == nil {
            guard daemon.isRunning, Date() < deadline else { throw FixtureError.failed("tresord did not start") }
            usleep(20_000)
        }
        try tresor(["init", "--passcode-stdin"], input: passcode + "\n")
    }

    deinit {
        if daemon.isRunning {
            daemon.terminate()
            daemon.waitUntilEnded()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Registers `executable` (by default this test runner) as application `id` of `team`.
    /// - Throws: ``FixtureError`` when `tresor app register` refuses.
    public func register(id: String, team: String, groups: [String] = [], executable: URL? = nil) throws {
        let path = executable?.path ?? ProcessImage.ownExecutablePath ?? CommandLine.arguments[0]
        try tresor(
            ["app", "register", "--id", id, "--team", team, "--exe", path, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: passcode + "\n")
    }

    /// A TresorKit keychain on this daemon, never starting another.
    /// - Throws: What connecting throws.
    public func keychain() throws -> Keychain {
        Keychain(client: try TresorClient.connect(paths: paths, startDaemon: false))
    }

    /// Runs `tresor` to its end.
    /// - Returns: Its standard output.
    /// - Throws: ``FixtureError`` when it exits non-zero.
    @discardableResult
    public func tresor(_ arguments: [String], input: String? = nil) throws -> String {
        let (status, output) = try run(Self.binaries.appendingPathComponent("tresor"), arguments, input: input)
        guard status == 0 else { throw FixtureError.failed("tresor \(arguments.first ?? "") exited \(status): \(output)") }
        return output
    }

    /// Runs `executable` with this home's environment, `input` on its standard input.
    /// - Returns: Its exit status and its standard output and error, together.
    /// - Throws: What starting the process throws.
    public func run(_ executable: URL, _ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let output = Pipe(), standardInput = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = standardInput
        try process.run()
        if let input { try standardInput.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
        try standardInput.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.waitForStatus(), text)
    }

    /// Whether the daemon still runs (a request it choked on would have ended it).
    public var daemonIsRunning: Bool { daemon.isRunning }

    /// The daemon's log and every file of the home, as bytes: where no secret may appear.
    public func storedBytes() throws -> [Data] {
        var files: [Data] = []
        let enumerator = FileManager.default.enumerator(at: paths.home, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(try Data(contentsOf: url)) }
        }
        return files
    }
}

public enum FixtureError: Error {
    case failed(String)
}
