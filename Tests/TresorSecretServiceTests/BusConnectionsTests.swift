import Foundation
import Testing
import TresorSystem
import TresorTestSupport

@testable import TresorSecretService

/// What the provider checks of the process the bus names for a connection (``BusConnections``),
/// with real processes and real Unix sockets: a listening socket stands for the bus, and this
/// test process, or a child, for the client.
@Suite(.blocksItsThread) struct BusConnectionsTests {
    /// A listening socket at a path of its own, and one connection to it made by this process.
    final class FakeBus {
        let folder: URL
        let listener: Int32
        private(set) var client: Int32
        let accepted: Int32
        var address: [UInt8] { Array(folder.appendingPathComponent("bus").path.utf8) }

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("bus-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("bus").path
            let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0), connecting = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard UnixSockets.bind(listening, to: path) == 0, listen(listening, 4) == 0, UnixSockets.connect(connecting, to: path) == 0 else {
                throw POSIXError(.EIO)
            }
            (listener, client, accepted) = (listening, connecting, accept(listening, nil, nil))
        }

        /// Closes this process's end of the connection. Once only: a descriptor closed twice may
        /// close what another test running beside this one opened under the same number meanwhile.
        func closeClient() {
            close(client)
            client = -1
        }

        deinit {
            [listener, client, accepted].filter { $0 >= 0 }.forEach { close($0) }
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test func aConnectionItsProcessHoldsAloneIsNotDoubted() throws {
        let bus = try FakeBus()
        #expect(UnixSockets.peerAddress(ofConnected: bus.client) == bus.address)
        let connections = BusConnections(busAddress: bus.address)
        connections.appeared(":1.1", pid: getpid())
        #expect(connections.doubt(about: ":1.1", pid: getpid()) == nil)
    }

    @Test func theCredentialsTheBusGaveWhenAConnectionAppearedServeItsFirstCall() {
        let connections = BusConnections(busAddress: nil)
        connections.appeared(":1.4", pid: getpid(), uid: getuid())
        #expect(connections.credentials(of: ":1.4")?.pid == getpid())
        #expect(connections.credentials(of: ":1.4")?.uid == getuid())
        // A pid without the uid is not enough: the bus is asked again then.
        connections.appeared(":1.5", pid: getpid())
        #expect(connections.credentials(of: ":1.5") == nil)
        connections.left(":1.4")
        #expect(connections.credentials(of: ":1.4") == nil)
        #expect(connections.credentials(of: ":1.6") == nil)
    }

    @Test func aProcessThatNoLongerHoldsItsConnectionIsDoubted() throws {
        let bus = try FakeBus()
        let connections = BusConnections(busAddress: bus.address)
        connections.appeared(":1.1", pid: getpid())
        bus.closeClient()
        #expect(connections.doubt(about: ":1.1", pid: getpid())?.contains("does not hold the bus connection it opened") == true)
        // Two connections named for one process, and one socket: one of them is spoken on by another.
        let again = try FakeBus()
        let two = BusConnections(busAddress: again.address)
        two.appeared(":1.2", pid: getpid())
        two.appeared(":1.3", pid: getpid())
        #expect(two.doubt(about: ":1.2", pid: getpid())?.contains("does not hold") == true)
    }

    @Test func anotherProgramHoldingTheSameConnectionIsDoubted() throws {
        let bus = try FakeBus()
        // python3 connects to the bus, keeps the socket across exec and forks: its child becomes
        // /bin/sleep, another program holding the same connection.
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = [
            "-c",
            """
            import os, socket, sys, time
            connection = socket.socket(socket.AF_UNIX)
            connection.connect(sys.argv[1])
            os.set_inheritable(connection.fileno(), True)
            child = os.fork()
            if child == 0:
                os.execv("/bin/sleep", ["sleep", "30"])
            print(child, flush=True)
            time.sleep(30)
            """, String(decoding: bus.address, as: UTF8.self),
        ]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        let sleeper = try #require(Int32(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        // The bus accepts every connection; an unaccepted one has no bound peer yet.
        let accepted = accept(bus.listener, nil, nil)
        defer { close(accepted) }
        // SIGKILL: the test runner's children inherit a mask that blocks SIGTERM.
        defer { [python.processIdentifier, sleeper].forEach { kill($0, SIGKILL) }; python.waitUntilEnded() }
        let deadline = Date().addingTimeInterval(10)
        while ProcessImage.executable(of: sleeper) == ProcessImage.executable(of: python.processIdentifier), Date() < deadline { usleep(10_000) }
        let connections = BusConnections(busAddress: bus.address)
        connections.appeared(":1.1", pid: python.processIdentifier)
        let doubt = connections.doubt(about: ":1.1", pid: python.processIdentifier)
        #expect(doubt?.contains("process \(sleeper), another program, holds the bus connection") == true, "\(doubt ?? "nil")")
    }

    @Test func aProcessThatRanAnotherProgramAfterItConnectedIsDoubted() throws {
        // sh waits for a line, then becomes sleep: same pid, another executable.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "read line; exec /bin/sleep 30"]
        let input = Pipe()
        shell.standardInput = input
        try shell.run()
        defer { kill(shell.processIdentifier, SIGKILL); shell.waitUntilEnded() }
        let pid = shell.processIdentifier
        let before = ProcessImage.of(pid: pid)
        let connections = BusConnections(busAddress: nil)
        connections.appeared(":1.7", pid: pid)
        #expect(connections.doubt(about: ":1.7", pid: pid) == nil)
        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        let deadline = Date().addingTimeInterval(10)
        while ProcessImage.of(pid: pid) == before, Date() < deadline { usleep(10_000) }
        #expect(ProcessImage.of(pid: pid)?.startTime == before?.startTime, "the same process")
        #expect(connections.doubt(about: ":1.7", pid: pid)?.contains("started another program after it connected") == true)
    }
}
