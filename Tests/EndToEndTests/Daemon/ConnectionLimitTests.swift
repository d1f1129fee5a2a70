import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Floods of connections from the user's own processes (docs/API.md, "Connections"): one process
/// gets its share and no more — past it, `503 unavailable` — so the user's other programs are
/// still served; past the daemon's limit a new connection waits in the socket's backlog — the
/// daemon neither accepts it nor runs out of descriptors — and is served as soon as one lets go.
@Suite(.blocksItsThread, .serialized) struct ConnectionLimitTests {
    static let limit = 256
    static let share = 64

    /// What the flood scripts share: a request, and its answer's status (nil when none came in
    /// time, "closed" when the daemon closed the connection first) and body.
    static let asking = """
        import json, os, select, socket, subprocess, sys
        request = b"GET \(Route.keychains) HTTP/1.1\\r\\nHost: t\\r\\n\\r\\n"
        def ask(path):
            s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(request)
            return s
        def answer(s, seconds):
            data = b""
            while b"\\r\\n\\r\\n" not in data or len(data.partition(b"\\r\\n\\r\\n")[2]) < length(data):
                if not select.select([s], [], [], seconds)[0]: return None, b""
                chunk = s.recv(65536)
                if not chunk: return "closed", b""
                data += chunk
            return data.split(b" ")[1].decode(), data.partition(b"\\r\\n\\r\\n")[2]
        def length(data):
            for line in data.partition(b"\\r\\n\\r\\n")[0].split(b"\\r\\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length": return int(value)
            return 0

        """

    /// One process opens `count` connections and asks on each; then, holding them, runs the CLI.
    static let oneProcess =
        asking + """
            path, count, tresor = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            held, statuses, refusal = [], {}, None
            for _ in range(count):
                s = ask(path)
                status, body = answer(s, 5)
                statuses[str(status)] = statuses.get(str(status), 0) + 1
                if status == "503" and refusal is None: refusal = json.loads(body)["error"]
                held.append(s)
            print(json.dumps({"statuses": statuses, "refusal": refusal}))
            cli = subprocess.run([tresor, "status"], capture_output=True, timeout=60)
            print("cli", cli.returncode)
            """

    /// Four processes take their share each, the daemon's whole limit; a connection of the
    /// parent's then waits until one of them lets one go.
    static let fourProcesses =
        asking + """
            path, share = sys.argv[1], int(sys.argv[2])
            def hold_share(ready, go):
                held = []
                for _ in range(share):
                    s = ask(path)
                    status = answer(s, 10)[0]
                    if status != "200": sys.stderr.write(f"a held connection was answered {status}\\n"); os._exit(1)
                    held.append(s)
                os.write(ready, b"r")
                os.read(go, 1)
                held.pop().close()
                os.read(go, 1)
                os._exit(0)
            children = []
            for _ in range(4):
                ready_r, ready_w = os.pipe(); go_r, go_w = os.pipe()
                if os.fork() == 0:
                    # Only its own pipes: a sibling's left open here would never end.
                    for other in children: os.close(other[0]); os.close(other[1])
                    os.close(ready_r); os.close(go_w)
                    hold_share(ready_w, go_r)
                os.close(ready_w); os.close(go_r)
                children.append((ready_r, go_w))
            if any(os.read(ready, 1) != b"r" for ready, _ in children): sys.exit("a process could not hold its share")
            print("held", 4 * share)
            waiting = ask(path)
            print("past the limit", answer(waiting, 1)[0])
            os.write(children[0][1], b"g")
            print("once one closed", answer(waiting, 10)[0])
            for _, go in children: os.close(go)
            for _ in children: os.wait()
            """

    @Test func oneProcessHoldingConnectionsLeavesRoomForTheUsersOtherPrograms() throws {
        let harness = try Harness.initialized(passcode: "e2e-share-passcode")
        let tresor = harness.binaries.appendingPathComponent("tresor").path
        var environment = harness.environment
        environment["TRESOR_TIMEOUT"] = "5"
        let result = try harness.run(
            Harness.python, ["-c", Self.oneProcess, harness.paths.socket.path, "300", tresor], environment: environment, timeout: 120)
        #expect(result.succeeded, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        struct Flood: Decodable {
            var statuses: [String: Int]
            var refusal: APIError?
        }
        let flood = try JSONDecoder().decode(Flood.self, from: Data(try #require(lines.first).utf8))
        #expect(flood.statuses == ["200": Self.share, "503": 300 - Self.share], "\(flood.statuses)")
        #expect(flood.refusal?.code == .unavailable)
        #expect(flood.refusal?.message.contains("64 connections") == true, "\(flood.refusal?.message ?? "")")
        #expect(lines.last == "cli 0", "the CLI was not served while one process held its connections: \(lines)")
        #expect(harness.daemonIsRunning)
    }

    @Test func aConnectionPastTheLimitWaitsUntilOneCloses() throws {
        let harness = try Harness.initialized(passcode: "e2e-flood-passcode")
        let result = try harness.run(Harness.python, ["-c", Self.fourProcesses, harness.paths.socket.path, "\(Self.share)"], timeout: 120)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(lines.first == "held \(Self.limit)", "every connection up to the limit is served: \(lines)")
        #expect(lines.contains("past the limit None"), "a connection past the limit was answered: \(lines)")
        #expect(lines.last == "once one closed 200", "the waiting connection was not served once one closed: \(lines)")
        #expect(harness.daemonIsRunning)
        #expect(try harness.tresor(["status"]).succeeded)
    }
}
