import Foundation
import Testing
import TresorTestSupport

/// The web server run beyond its loopback defaults (docs/WEB.md, "Running
/// behind a reverse proxy"): `--web-bind` picks the address it listens on; `--public-origin`
/// is then the only name it answers as (Host and Origin), with a `Secure` cookie when it is
/// https; `X-Forwarded-For` names the client for the rate limits only when a configured proxy
/// sends it.
@Suite(.blocksItsThread, .serialized) struct WebDeploymentTests {
    static let passcode = "e2e-web-deployment-passcode"

    func password(_ who: String, _ harness: Harness) -> String {
        let password = "e2e-\(who)-password-\(UUID().uuidString.prefix(8))"
        harness.secrets.append(password)
        return password
    }

    @Test func boundToAnotherLoopbackAddressItAnswersThereOnly() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode, extraArguments: ["--web-bind", "127.0.0.2"], address: "127.0.0.2")
        var alice = WebBrowser(server)
        let registered = try alice.register("alice", password("alice", harness))
        #expect(registered.status == 201, "a page served from http://127.0.0.2:PORT works: \(registered.text)")
        #expect(try alice.get("/api/session").status == 200)
        let cookie = try #require(registered.setCookies.first { $0.hasPrefix("tresor_session=") })
        #expect(!cookie.contains("Secure"), "plain http keeps the cookie usable: \(cookie)")
        let elsewhere = WebServerAddress(port: server.port)
        #expect(throws: WebTestError.self, "nothing listens on 127.0.0.1") { try elsewhere.send("GET", "/healthz") }
        try harness.expectNoSecretLeaked()
    }

    @Test func beyondLoopbackWithoutAPublicOriginTheDaemonDoesNotStart() throws {
        let harness = try Harness()
        let port = try Harness.freePort()
        let started = try harness.tresord(["--web", "\(port)", "--web-bind", "0.0.0.0"])
        #expect(started.status == 1)
        #expect(started.stderr.contains("needs the origin browsers reach it as: --public-origin"), "\(started.stderr)")
        let bad = try harness.tresord(["--web", "\(port)", "--web-bind", "0.0.0.0", "--public-origin", "https://notes.example.com/app"])
        #expect(bad.status == 1 && bad.stderr.contains("no path"), "\(bad.stderr)")
    }

    @Test func behindAnHTTPSOriginItAnswersOnlyAsThatOriginWithASecureCookie() throws {
        let harness = try Harness()
        let direct = try harness.startWebDaemon(passcode: Self.passcode, extraArguments: ["--public-origin", "HTTPS://Notes.Example.com"])
        var proxied = direct
        proxied.publicOrigin = "https://notes.example.com"

        // What the proxy forwards: Host and Origin name the public origin.
        var alice = WebBrowser(proxied)
        let registered = try alice.register("alice", password("alice", harness))
        #expect(registered.status == 201, "\(registered.text)")
        let cookie = try #require(registered.setCookies.first { $0.hasPrefix("tresor_session=") })
        #expect(cookie.contains("; Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
        harness.secrets += [alice.token, alice.originToken].compactMap { $0 }
        let note = try alice.createNote(title: "behind the proxy", body: "served as notes.example.com")
        #expect(try alice.get("/api/notes/\(note)").status == 200)

        // Its loopback names are no longer names it answers as (a rebinding page on them too).
        var local = WebBrowser(direct)
        let refused = try local.register("bob", password("bob", harness))
        #expect(refused.status == 403 && refused.code == "csrf" && refused.sessionToken == nil, "\(refused.status) \(refused.text)")
        #expect(try direct.send("GET", "/").status == 403)
        // The right Host with a page of another origin: refused.
        let crossOrigin = try alice.request("POST", "/api/notes", json: ["title": "x", "body": "y"], origin: "http://127.0.0.1:\(direct.port)")
        #expect(crossOrigin.status == 403 && crossOrigin.code == "csrf")
        // A load balancer asks by address.
        #expect(try direct.send("GET", "/healthz").status == 200)

        let signedOut = try alice.delete("/api/session")
        #expect(signedOut.status == 204 && signedOut.setCookies.contains { $0.hasPrefix("tresor_session=;") && $0.contains("; Secure") })
        try harness.expectNoSecretLeaked()
    }

    /// Sign-in failures count per client address (20 free); behind a trusted proxy the client is
    /// the one `X-Forwarded-For` names, and from anyone else the header changes nothing.
    @Test func forwardedForNamesTheClientOnlyFromATrustedProxy() throws {
        let harness = try Harness()
        try harness.mergeConfiguration(["webTrustedProxies": ["127.0.0.2"]])
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        var proxy = server
        proxy.source = "127.0.0.2"
        let davePassword = password("dave", harness)
        var dave = WebBrowser(server)
        #expect(try dave.register("dave", davePassword).status == 201)

        func signIn(_ name: String, _ password: String, via address: WebServerAddress, forwardedFor client: String) throws -> WebResponse {
            let body = try JSONSerialization.data(withJSONObject: ["name": name, "password": password])
            return try address.send(
                "POST", "/api/session",
                headers: [
                    ("Origin", address.origin), ("Content-Type", "application/json"), ("X-Forwarded-For", client),
                ], body: body)
        }

        // Straight from 127.0.0.1, a header naming a new client each time is ignored: 20 failures
        // in all and the address waits.
        for attempt in 1...20 {
            let answer = try signIn("spray\(attempt)", "wrong-guess-\(attempt)", via: server, forwardedFor: "198.51.100.\(attempt)")
            #expect(answer.status == 401, "failure \(attempt): \(answer.status)")
        }
        let sprayed = try signIn("dave", davePassword, via: server, forwardedFor: "198.51.100.99")
        #expect(sprayed.status == 429 && sprayed.code == "throttled", "\(sprayed.status)")

        // Through the trusted proxy, the client it names is counted: one client's 20 failures
        // hold that client only — not the proxy's other clients, not the proxy's own address.
        for attempt in 1...20 {
            let answer = try signIn("guess\(attempt)", "wrong-guess-\(attempt)", via: proxy, forwardedFor: "203.0.113.7")
            #expect(answer.status == 401, "failure \(attempt): \(answer.status)")
        }
        let held = try signIn("dave", davePassword, via: proxy, forwardedFor: "203.0.113.7")
        #expect(held.status == 429, "\(held.status)")
        let spoofedHop = try signIn("dave", davePassword, via: proxy, forwardedFor: "198.51.100.1, 203.0.113.7")
        #expect(spoofedHop.status == 429, "the client's own header entries do not move it: the right-most untrusted hop counts")
        let other = try signIn("dave", davePassword, via: proxy, forwardedFor: "203.0.113.8")
        #expect(other.status == 200, "another client behind the proxy is not held: \(other.status)")
        harness.secrets += [other.sessionToken].compactMap { $0 }
        try harness.expectNoSecretLeaked()
    }
}
