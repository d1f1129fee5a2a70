import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Malformed keychain requests, sent raw by a registered application (Python, registered for
/// the test): unknown attributes, wrong types, bad ids — clear errors, nothing touched.
@Suite(.blocksItsThread, .serialized) struct RawKeychainRequestTests {
    static let python = URL(fileURLWithPath: "/usr/bin/python3")

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func malformedItemRequestsGetClearErrors() throws {
        let harness = try Harness.initialized(passcode: "e2e-raw-passcode")
        let realPython = try FileManager.default.destinationOfSymbolicLink(atPath: Self.python.path)
        let executable = Self.python.deletingLastPathComponent().appendingPathComponent(realPython).path
        #expect(
            try harness.tresor(
                ["app", "register", "--id", "TEAMP.python", "--team", "TEAMP", "--exe", executable, "--passcode-stdin"],
                input: "e2e-raw-passcode\n"
            ).succeeded)

        // Sends each JSON body (one per line of stdin) to PATH and prints "status body" per request.
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
        func send(_ path: String, _ bodies: [String]) throws -> [(Int, APIError?)] {
            let result = try harness.run(Self.python, ["-c", script, path, harness.paths.socket.path], input: bodies.joined(separator: "\n") + "\n")
            return result.stdout.split(separator: "\n").map { line in
                let parts = line.split(separator: " ", maxSplits: 1)
                let error = try? APICoding.decoder.decode(ErrorResponse.self, from: Data((parts.count > 1 ? parts[1] : "").utf8)).error
                return (Int(parts[0]) ?? -1, error)
            }
        }

        let good = try send("/v1/items/add", [#"{"itemClass":"genp","attributes":{"service":"py","account":"a"},"secret":"c2VjcmV0"}"#])
        #expect(good.first?.0 == 200)

        let answers = try send(
            "/v1/items/add",
            [
                #"{"itemClass":"genp","attributes":{"service":"py","acount":"typo"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","port":"eighty"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","server":"x"},"secret":"eA=="}"#,
                #"{"itemClass":"nope","attributes":{},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py"},"secret":"not base64!"}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","account":"a"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","creationDate":5},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","accessGroup":"OTHER.group"},"secret":"eA=="}"#,
            ])
        let expected: [(Int, APIError.Code, String)] = [
            (400, .param, "unknown attribute \"acount\""),
            (400, .param, "attributes.port"),
            (400, .param, "server does not apply"),
            (400, .param, "malformed request body"),
            (400, .param, "malformed request body"),
            (409, .duplicateItem, "same primary key"),
            (400, .param, "set by the keychain"),
            (403, .missingEntitlement, "OTHER.group"),
        ]
        #expect(answers.count == expected.count)
        for ((status, error), (wantedStatus, wantedCode, fragment)) in zip(answers, expected) {
            #expect(status == wantedStatus, "\(fragment)")
            #expect(error?.code == wantedCode, "\(fragment): \(error?.message ?? "")")
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "") should mention \(fragment)")
        }
        let searches = try send(
            "/v1/items/search",
            [
                #"{"query":{"itemClass":"genp","attributes":{"service":"nothing-like-this"},"limit":"all","returnData":false,"returnAttributes":true}}"#,
                #"{"query":{"itemClass":"genp","attributes":{"service":"py","account":"a"},"limit":"one","returnData":true,"returnAttributes":false}}"#,
                #"{"keychain":"Nope","query":{"itemClass":"genp","attributes":{},"limit":"one","returnData":false,"returnAttributes":true}}"#,
            ])
        #expect(searches.map(\.0) == [404, 200, 404])
        #expect(searches[0].1?.code == .itemNotFound)
        #expect(searches[2].1?.code == .noSuchKeychain)
        #expect(harness.daemonIsRunning)
        try harness.expectNoSecretLeaked()
    }
}
