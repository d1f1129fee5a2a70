import Foundation

extension Harness {
    /// Debian's Python: an application of its own to the daemon (identified by its executable,
    /// not the `tresor` beside the daemon), for requests no `tresor` command sends.
    static let python = URL(fileURLWithPath: "/usr/bin/python3")

    /// Sends each JSON body to the daemon's `path` from one Python process, run as this
    /// harness's user, each on a connection of its own.
    /// - Parameters:
    ///   - path: the route, e.g. `/v1/items/add`.
    ///   - bodies: the JSON bodies, one line each.
    ///   - revealing: secrets the answers may hold (see ``run(_:_:input:environment:timeout:revealing:)``).
    /// - Returns: each answer's status (-1 for a line that has none) and body, in order.
    func pythonRequests(_ path: String, _ bodies: [String], revealing: [String] = []) throws -> [(status: Int, body: String)] {
        let script = """
            import socket, sys
            path, socket_path = sys.argv[1], sys.argv[2]
            for body in sys.stdin.read().split("\\n"):
                if not body: continue
                s = socket.socket(socket.AF_UNIX); s.connect(socket_path)
                data = body.encode()
                s.sendall(b"POST " + path.encode() + b" HTTP/1.1\\r\\nHost: t\\r\\nContent-Type: application/json\\r\\nContent-Length: " + str(len(data)).encode() + b"\\r\\nConnection: close\\r\\n\\r\\n" + data)
                answer = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    answer += chunk
                head, _, payload = answer.partition(b"\\r\\n\\r\\n")
                print(head.split(b" ")[1].decode(), payload.decode())
            """
        let result = try run(
            Self.python, ["-c", script, path, paths.socket.path], input: bodies.joined(separator: "\n") + "\n", revealing: revealing)
        return result.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (Int(parts[0]) ?? -1, parts.count > 1 ? String(parts[1]) : "")
        }
    }
}
