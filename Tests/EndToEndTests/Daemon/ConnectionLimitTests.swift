import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A flood of connections from the user's own processes: past the daemon's limit a new
/// connection waits in the socket's backlog — the daemon neither accepts it nor runs out of
/// descriptors — and is served as soon as the flood lets one go (docs/SECURITY.md, "Applications
/// using TresorKit", connection flood).
@Suite(.blocksItsThread, .serialized) struct ConnectionLimitTests {
    static let limit = 256

    /// The flood comes from a process of its own, which holds nothing but it: no descriptor of
    /// the test process (where other tests open and close theirs meanwhile) can touch it.
    static let flood = """
        import select, socket, sys
        path, limit = sys.argv[1], int(sys.argv[2])
        request = b"GET \(Route.keychains) HTTP/1.1\\r\\nHost: t\\r\\n\\r\\n"
        def answer(s, seconds):
            data = b""
            while b"\\r\\n\\r\\n" not in data or len(data.partition(b"\\r\\n\\r\\n")[2]) < length(data):
                if not select.select([s], [], [], seconds)[0]: return None
                chunk = s.recv(65536)
                if not chunk: return "closed"
                data += chunk
            return data.split(b" ")[1].decode()
        def length(data):
            for line in data.partition(b"\\r\\n\\r\\n")[0].split(b"\\r\\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length": return int(value)
            return 0
        held = []
        for _ in range(limit):
            s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(request)
            print("held", answer(s, None)); held.append(s)
        waiting = socket.socket(socket.AF_UNIX); waiting.connect(path); waiting.sendall(request)
        early = answer(waiting, 1)
        closed = sum(1 for s in held if select.select([s], [], [], 0)[0] and not s.recv(1, socket.MSG_PEEK))
        print("past the limit", early, "held connections the daemon closed", closed)
        held.pop(0).close()
        print("once one closed", early or answer(waiting, 10))
        """

    @Test func aConnectionPastTheLimitWaitsUntilOneCloses() throws {
        let harness = try Harness.initialized(passcode: "e2e-flood-passcode")
        let result = try harness.run(Harness.python, ["-c", Self.flood, harness.paths.socket.path, "\(Self.limit)"], timeout: 120)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(lines.filter { $0 == "held 200" }.count == Self.limit, "every connection up to the limit is served")
        #expect(
            lines.contains("past the limit None held connections the daemon closed 0"), "a connection past the limit was served: \(lines.suffix(2))")
        #expect(lines.last == "once one closed 200", "the waiting connection was not served once one closed: \(lines.suffix(2))")
        #expect(harness.daemonIsRunning)
        #expect(try harness.tresor(["status"]).succeeded)
    }
}
