import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Sync over TLS (docs/SYNC.md, "Transport"): Debian's nginx terminates TLS with a certificate
/// of a test CA made here with openssl, in front of a real server instance. A device given that
/// CA (`--ca-file`) joins and syncs; without it, or with another CA, the join fails with a
/// certificate error and nothing is stored.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(if: TestPostgres.shouldRun && NginxBalancer.shouldRun && TestCA.opensslRuns)
) struct SyncTLSTests {
    @Test func aDeviceGivenTheServersCAJoinsAndSyncsAndOthersAreRefused() async throws {
        let port = try LoopbackPort.free()
        let origin = "https://localhost:\(port)"
        let cluster = try await ServerInstances(
            count: 1, configuration: ["webRegistration": "open", "webTrustedProxies": ["127.0.0.1"]], arguments: ["--public-origin", origin])
        let root = cluster.harnesses[0].root
        let (ca, certificate, key) = try TestCA.make(named: "server-ca", in: root)
        let (otherCA, _, _) = try TestCA.make(named: "other-ca", in: root)
        let nginx = try NginxBalancer(port: port, upstreams: [cluster.servers[0].port], directory: root, tls: (certificate, key))
        defer { withExtendedLifetime(nginx) {} }
        // Registered on the instance itself, named as the proxy serves it.
        let (_, password) = try cluster.registered("ada", on: WebServerAddress(port: cluster.servers[0].port, publicOrigin: origin))
        let laptop = try SyncE2E.device(password), phone = try SyncE2E.device(password)

        func join(_ device: Harness, name: String, caFile: String?) throws -> Harness.Result {
            try device.tresor(
                ["sync", "join", origin, "--account", "ada", "--password-stdin", "--device-name", name, "--no-wait", "--json"]
                    + (caFile.map { ["--ca-file", $0] } ?? []),
                input: password + "\n")
        }

        // Without the CA (the system's do not know it), or with another CA: refused, nothing stored.
        for caFile in [nil, otherCA] {
            let refused = try join(phone, name: "phone", caFile: caFile)
            #expect(!refused.succeeded)
            #expect(refused.stdout.contains("not trusted") && refused.stdout.contains("certificate"), "\(refused.stdout) \(refused.stderr)")
            #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).joined == false)
            #expect(!FileManager.default.fileExists(atPath: phone.paths.home.appendingPathComponent("sync-account").path))
        }

        // A CA file that is not one is refused before anything is asked: a device, a file past
        // 1 MiB, a folder, none at all.
        let large = root.appendingPathComponent("large.pem")
        try Data(count: (1 << 20) + 1).write(to: large)
        for bad in ["/dev/zero", large.path, root.path, root.appendingPathComponent("missing.pem").path] {
            let refused = try join(phone, name: "phone", caFile: bad)
            #expect(!refused.succeeded && refused.stdout.contains("not a readable file of at most 1 MiB"), "\(bad): \(refused.stdout)")
        }

        // With it: the laptop creates the circle, the phone joins, an item goes across.
        let created = try join(laptop, name: "laptop", caFile: ca)
        #expect(created.succeeded, "\(created.stdout) \(created.stderr)")
        let asked = try CLIJSON.decode(SyncJoinAnswer.self, from: Data(try join(phone, name: "phone", caFile: ca).stdout.utf8))
        let request = try #require(asked.requestID)
        _ = try SyncE2E.sync(laptop, SyncRequestsAnswer.self, ["approve", request, "--passcode-stdin"], input: SyncE2E.passcode + "\n")
        #expect(try SyncE2E.sync(phone, SyncJoinAnswer.self, ["join", origin, "--account", "ada", "--no-wait"]).state == .trusted)
        #expect(try SyncE2E.sync(phone, SyncStatusAnswer.self, ["status"]).server == origin)

        try SyncNowTests.add(laptop, service: "tls.example.com", secret: "e2e-over-tls")
        #expect(try SyncNowTests.syncNow(laptop).pushed == 1)
        #expect(try SyncNowTests.syncNow(phone).applied == 1)
        #expect(try SyncNowTests.secret(phone, service: "tls.example.com") == "e2e-over-tls")
    }
}

/// A certificate authority made for a test with the openssl CLI.
enum TestCA {
    static let openssl = "/usr/bin/openssl"
    static var opensslRuns: Bool {
        FileManager.default.isExecutableFile(atPath: openssl) || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    /// A test CA in `directory`, and a certificate it issued for localhost and 127.0.0.1.
    /// - Returns: the PEM files of the CA, the server's certificate and its key.
    static func make(named name: String, in directory: URL) throws -> (ca: String, certificate: String, key: String) {
        let dir = directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let extensions = dir + "/server.ext"
        try Data(
            """
            subjectAltName = DNS:localhost, IP:127.0.0.1
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth

            """.utf8
        ).write(to: URL(fileURLWithPath: extensions))
        for arguments in [
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/ca.key", "-out",
                dir + "/ca.pem", "-days", "2", "-subj", "/CN=Tresor test CA \(name)", "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ],
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/server.key", "-out",
                dir + "/server.csr", "-subj", "/CN=localhost",
            ],
            [
                "x509", "-req", "-in", dir + "/server.csr", "-CA", dir + "/ca.pem", "-CAkey", dir + "/ca.key", "-CAcreateserial", "-out",
                dir + "/server.pem", "-days", "2", "-extfile", extensions,
            ],
        ] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilEnded()
            try #require(process.terminationStatus == 0, "openssl \(arguments.first ?? "") failed")
        }
        return (dir + "/ca.pem", dir + "/server.pem", dir + "/server.key")
    }
}
