import Foundation
import GRDB
import Testing
import TresorProtocol
import TresorTestSupport

/// The web server against a real daemon started with `--web`: pages and path tricks,
/// security headers, registration and sign-in, sessions (forged, ended, expired), CSRF and
/// origin checks, sign-in rate limits, and how passwords are stored. Passwords, the passcode
/// and session tokens are declared to the harness, which searches every output, the
/// trace-level daemon log and every home file for them.
@Suite(.blocksItsThread, .serialized) struct WebAPITests {
    static let passcode = "e2e-web-passcode"

    func password(_ who: String) -> String { "e2e-\(who)-password-\(UUID().uuidString.prefix(8))" }

    /// Every API route with a method, for "no session" checks.
    static let apiRoutes: [(String, String)] = [
        ("GET", "/api/session"), ("DELETE", "/api/session"), ("GET", "/api/status"), ("GET", "/api/folders"),
        ("POST", "/api/folders"), ("DELETE", "/api/folders/x"), ("GET", "/api/notes"), ("POST", "/api/notes"),
        ("GET", "/api/notes/x"), ("PATCH", "/api/notes/x"), ("DELETE", "/api/notes/x"),
        ("POST", "/api/notes/x/attachments?kind=image&name=a.png"), ("GET", "/api/notes/x/attachments/y"),
        ("PATCH", "/api/notes/x/attachments/y"), ("DELETE", "/api/notes/x/attachments/y"), ("GET", "/api/passphrase"), ("POST", "/api/passphrase"),
        ("POST", "/api/passphrase/change"), ("POST", "/api/passphrase/reset"), ("POST", "/api/passphrase/proof"),
        ("POST", "/api/notes/x/lock"), ("PUT", "/api/notes/x/locked-body"), ("POST", "/api/notes/x/rewrap"),
        ("POST", "/api/notes/x/wrapped-key"),
        ("POST", "/api/notes/x/participants"), ("DELETE", "/api/notes/x/participants/bob"), ("POST", "/api/secure-session"),
        ("GET", "/api/widget"),
    ]

    @Test func pagesStaticFilesHeadersAndPathTricks() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)

        let index = try server.send("GET", "/")
        #expect(index.status == 200 && index.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(index.text.contains("<html"))
        expectSecurityHeaders(index, api: false)
        let script = try server.send("GET", "/static/js/api.js")
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        expectSecurityHeaders(script, api: false)

        // Path tricks: all the same JSON 404 as an unknown route, with the headers.
        let tricks = [
            "/static/../Package.swift", "/static/js/../../WebClient.swift", "/static/%2e%2e/WebClient.swift",
            "/static/js%2Fapi.js", "/static/js/..%2F..%2FWebClient.swift", "/static/js/api.js%00.png", "/static/.hidden",
            "/static/js\\api.js", "/static/", "/static/js", "/static//js/api.js", "/static/js/api.js/",
            "/static/js/nope.js", "/widget/../../etc/passwd", "/nope", "/api/nope",
        ]
        for path in tricks {
            let response = try server.send("GET", path)
            #expect([404, 401].contains(response.status), "\(path) → \(response.status)")
            #expect(response.headers["content-type"]?.hasPrefix("application/json") == true, "\(path)")
            #expect(!response.text.contains("import") && !response.text.contains("root:"), "\(path) served a file")
            expectSecurityHeaders(response, api: path.hasPrefix("/api"))
        }
        let unknown = try server.send("GET", "/nope")
        #expect(unknown.status == 404 && unknown.code == "notFound")

        // Another name for this server (DNS rebinding) is refused, pages included.
        for host in ["evil.example:\(server.port)", "127.0.0.1.evil.example:\(server.port)", "127.0.0.1:1"] {
            let response = try server.send("GET", "/", host: host)
            #expect(response.status == 403 && response.code == "csrf", "Host \(host)")
        }
        #expect(try server.send("GET", "/", host: "localhost:\(server.port)").status == 200)
    }

    @Test func registrationSignInSessionAndSignOut() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alicePassword = password("alice")
        harness.secrets.append(alicePassword)
        var alice = WebBrowser(server)

        // Mismatched passwords, bad names, short passwords: 400, nothing created.
        let mismatch = try alice.post("/api/accounts", ["name": "alice", "password": alicePassword, "passwordAgain": alicePassword + "x"])
        #expect(mismatch.status == 400 && mismatch.code == "param" && mismatch.sessionToken == nil)
        for name in ["", "Alice Smith", "al/ice", String(repeating: "a", count: 33), "<script>", "ali\u{0}ce"] {
            let response = try alice.post("/api/accounts", ["name": name, "password": alicePassword, "passwordAgain": alicePassword])
            #expect(response.status == 400 && response.code == "param", "name \(name.debugDescription)")
        }
        let short = try alice.post("/api/accounts", ["name": "alice", "password": "short", "passwordAgain": "short"])
        #expect(short.status == 400 && short.code == "param")
        let local = try alice.post("/api/accounts", ["name": "LOCAL", "password": alicePassword, "passwordAgain": alicePassword])
        #expect(local.status == 409 && local.code == "conflict", "the local account's name is taken")
        #expect(try alice.signIn("alice", alicePassword).status == 401, "the refused registrations created nothing")
        let malformed = try server.send("POST", "/api/accounts", headers: [("Content-Type", "application/json")], body: Data("{\"name\":".utf8))
        #expect(malformed.status == 400 && malformed.code == "param")
        let missing = try alice.post("/api/accounts", ["name": "alice", "password": alicePassword])
        #expect(missing.status == 400 && missing.code == "param")

        let registered = try alice.register("Alice", alicePassword)
        #expect(registered.status == 201, "\(registered.text)")
        #expect(alice.account?["name"] as? String == "alice" && alice.account?["isLocal"] as? Bool == false, "names are case-folded")
        let cookie = try #require(registered.setCookies.first { $0.hasPrefix("tresor_session=") })
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
            #expect(cookie.contains(attribute), "cookie lacks \(attribute)")
        }
        let token = try #require(alice.token)
        #expect(token.count == 43, "256 random bits, base64url")
        harness.secrets.append(token)
        #expect(try alice.register("alice", alicePassword).status == 409, "names are unique")

        let session = try alice.get("/api/session")
        #expect(session.status == 200 && (session.json?["account"] as? [String: Any])?["name"] as? String == "alice")
        #expect(session.json?["csrfToken"] as? String == alice.csrf)
        let autoLock = session.json?["autoLock"] as? [String: Any]
        #expect(
            autoLock?["hiddenSeconds"] as? Int == 180 && autoLock?["desktopHiddenSeconds"] as? Int == 480 && autoLock?["idleSeconds"] as? Int == 480)
        expectSecurityHeaders(session, api: true)
        let status = try alice.get("/api/status")
        #expect(status.json?["keybag"] as? String == "unlocked" && status.json?["contentAvailable"] as? Bool == true)

        // Wrong password, unknown name: the same 401.
        var other = WebBrowser(server)
        let wrong = try other.signIn("alice", alicePassword + "x")
        let unknown = try other.signIn("nobody", alicePassword)
        #expect(wrong.status == 401 && wrong.code == "authFailed" && unknown.status == 401 && unknown.code == "authFailed")
        #expect(wrong.json?["message"] as? String == unknown.json?["message"] as? String)
        #expect(wrong.sessionToken == nil)
        let signedIn = try other.signIn("ALICE", alicePassword)
        #expect(signedIn.status == 200 && other.token != nil && other.token != alice.token)
        harness.secrets.append(other.token ?? "")

        // Signing out ends that session only; its cookie is worthless afterwards.
        let out = try alice.delete("/api/session")
        #expect(out.status == 204 && out.setCookies.contains { $0.hasPrefix("tresor_session=;") && $0.contains("Max-Age=0") })
        #expect(try alice.get("/api/session").code == "unauthorized")
        #expect(try other.get("/api/session").status == 200)

        // No cookie, a forged one, a malformed one: 401 on every API route.
        var forged = WebBrowser(server)
        for token in [nil, String(repeating: "A", count: 43), "x", token] {
            forged.token = token
            forged.originToken = other.originToken
            forged.csrf = other.csrf
            for (method, path) in Self.apiRoutes {
                let response = try forged.request(method, path, json: method == "GET" || method == "DELETE" ? nil : ["x": 1])
                #expect(
                    response.status == 401 && response.code == "unauthorized",
                    "\(method) \(path) with \(token == nil ? "no" : "a bad") cookie → \(response.status)")
            }
        }

        // A restart signs everyone out.
        harness.stopDaemon()
        let restarted = try harness.startWebDaemon(passcode: Self.passcode)
        var again = WebBrowser(restarted)
        again.token = other.token
        again.originToken = other.originToken
        #expect(try again.get("/api/session").status == 401)
        try harness.expectNoSecretLeaked()
    }

    @Test func expiredSessionIsRefused() throws {
        let harness = try Harness(configuration: #"{"webSessionSeconds": 2}"#)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let pass = password("erin")
        harness.secrets.append(pass)
        var erin = WebBrowser(server)
        let registered = try erin.register("erin", pass)
        #expect(registered.setCookies.first?.contains("Max-Age=2") == true)
        #expect(try erin.get("/api/session").status == 200)
        sleep(3)
        let expired = try erin.get("/api/session")
        #expect(expired.status == 401 && expired.code == "unauthorized")
        #expect(try erin.signIn("erin", pass).status == 200)
    }

    @Test func csrfHeaderAndOriginAreRequired() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let pass = password("carol")
        harness.secrets.append(pass)
        var carol = WebBrowser(server)
        try carol.register("carol", pass)
        let note = try carol.createNote(title: "kept", body: "kept body")

        let attempts: [(String, WebResponse)] = [
            ("no header", try carol.request("POST", "/api/notes", json: ["title": "csrf", "body": "x"], csrf: false)),
            (
                "wrong header",
                try carol.request("POST", "/api/notes", json: ["title": "csrf", "body": "x"], headers: [("X-Tresor-CSRF", "forged")], csrf: false)
            ),
            ("foreign origin", try carol.request("POST", "/api/notes", json: ["title": "csrf", "body": "x"], origin: "http://evil.example")),
            ("null origin", try carol.request("POST", "/api/notes", json: ["title": "csrf", "body": "x"], origin: "null")),
            (
                "cross-site fetch",
                try carol.request("POST", "/api/notes", json: ["title": "csrf", "body": "x"], headers: [("Sec-Fetch-Site", "cross-site")])
            ),
            ("delete without header", try carol.request("DELETE", "/api/notes/\(note)", csrf: false)),
            ("edit without header", try carol.request("PATCH", "/api/notes/\(note)", json: ["title": "csrf"], csrf: false)),
            ("sign-out without header", try carol.request("DELETE", "/api/session", csrf: false)),
        ]
        for (what, response) in attempts {
            #expect(response.status == 403 && response.code == "csrf", "\(what) → \(response.status)")
        }
        // Nothing changed.
        let notes = try carol.get("/api/notes").json?["notes"] as? [[String: Any]] ?? []
        #expect(notes.count == 1 && notes.first?["title"] as? String == "kept")
        #expect(try carol.get("/api/session").status == 200, "still signed in")

        // Signing in: a form post (not JSON) or another origin is refused before any check.
        let form = try server.send(
            "POST", "/api/session", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data("name=carol&password=x".utf8))
        #expect(form.status == 403 && form.code == "csrf")
        let foreign = try server.send(
            "POST", "/api/session", headers: [("Content-Type", "application/json"), ("Origin", "http://evil.example")],
            body: try JSONSerialization.data(withJSONObject: ["name": "carol", "password": pass]))
        #expect(foreign.status == 403 && foreign.sessionToken == nil)
        try harness.expectNoSecretLeaked()
    }

    @Test func signInIsRateLimitedPerNameAndPerAddress() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let bobPassword = password("bob"), davePassword = password("dave")
        harness.secrets += [bobPassword, davePassword]
        var bob = WebBrowser(server), dave = WebBrowser(server)
        try bob.register("bob", bobPassword)
        try dave.register("dave", davePassword)

        // Per name: five free failures, then even the right password waits, without a check.
        var guesser = WebBrowser(server)
        for attempt in 1...5 {
            #expect(try guesser.signIn("bob", "wrong-guess-\(attempt)").status == 401)
        }
        let throttled = try guesser.signIn("bob", bobPassword)
        #expect(throttled.status == 429 && throttled.code == "throttled" && throttled.sessionToken == nil)
        let retry = try #require(throttled.json?["retryAfterSeconds"] as? Int)
        #expect(retry >= 1 && throttled.headers["retry-after"] == "\(retry)")
        #expect(try guesser.signIn("BOB", bobPassword).status == 429, "the name is case-folded")
        // Another name from the same address is not held up by bob's count.
        #expect(try guesser.signIn("dave", davePassword).status == 200)

        // Per address: a guesser rotating names is stopped after 20 failures in all.
        for attempt in 6...20 {
            #expect(try guesser.signIn("spray\(attempt)", "wrong-guess-\(attempt)").status == 401, "failure \(attempt)")
        }
        let sprayed = try guesser.signIn("dave", davePassword)
        #expect(sprayed.status == 429 && sprayed.headers["retry-after"] != nil, "per-address limit")
        try harness.expectNoSecretLeaked()
    }

    /// Each registration costs a 600,000-round PBKDF2 run: past 20 from one address, they wait.
    @Test func registrationsAreRateLimitedPerAddress() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let shared = password("many")
        harness.secrets.append(shared)
        for index in 1...20 {
            var browser = WebBrowser(server)
            #expect(try browser.register("user\(index)", shared).status == 201, "registration \(index)")
        }
        var next = WebBrowser(server)
        let refused = try next.register("user21", shared)
        #expect(refused.status == 429 && refused.code == "throttled" && refused.headers["retry-after"] != nil)
        // Refused before anything was stored: the name is still free once the wait is over.
        var check = WebBrowser(server)
        #expect(try check.signIn("user21", shared).status == 401)
        try harness.expectNoSecretLeaked()
    }

    @Test func localAccountSignsInWithThePasscodeAndUnlocksTheKeybag() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try harness.status().keybag == .locked)

        var browser = WebBrowser(server)
        let wrong = try browser.signIn("local", "not-the-passcode")
        #expect(wrong.status == 401 && wrong.code == "authFailed")
        #expect(try harness.status().failedAttempts == 0, "web guesses count in the web's own limit, not the keybag's")
        #expect(try harness.status().keybag == .locked)

        let right = try browser.signIn("local", Self.passcode)
        #expect(right.status == 200 && browser.account?["isLocal"] as? Bool == true && browser.account?["name"] as? String == "local")
        harness.secrets.append(browser.token ?? "")
        #expect(try harness.status().keybag == .unlocked && harness.status().failedAttempts == 0)

        // The local account's notes are the CLI's.
        let id = try browser.createNote(title: "from the web", body: "local body")
        let listed = try harness.json([NoteSummaryProbe].self, ["note", "list"])
        #expect(listed.map(\.id) == [id])
        try harness.expectNoSecretLeaked()
    }

    /// An attachment's name goes in a header, not the URL a proxy logs, and keeps its spaces; a
    /// name still sent in the URL is read as a form writes it (`+` a space, `%2B` a plus).
    @Test func attachmentNamesKeepTheirSpacesAndStayOutOfTheURL() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let (browser, _) = try WebBrowser.registered("ada", on: server, harness)
        let id = try browser.createNote(title: "Taxes", body: "2025")
        let named = "Tax return 2025 é ü.pdf"
        let headed = try browser.request(
            "POST", "/api/notes/\(id)/attachments?kind=pdf", raw: Data("%PDF".utf8),
            headers: [("Tresor-Attachment-Name", named.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)])
        #expect(headed.status == 201 && headed.json?["name"] as? String == named, "\(headed.text)")
        for (query, expected) in [("a+b.txt", "a b.txt"), ("a%2Bb.txt", "a+b.txt"), ("a%20b.txt", "a b.txt")] {
            let sent = try browser.request("POST", "/api/notes/\(id)/attachments?kind=file&name=\(query)", raw: Data("x".utf8))
            #expect(sent.json?["name"] as? String == expected, "\(query): \(sent.text)")
        }
        let unnamed = try browser.request("POST", "/api/notes/\(id)/attachments?kind=file", raw: Data("x".utf8))
        #expect(unnamed.status == 400 && unnamed.text.contains("Tresor-Attachment-Name"), "\(unnamed.text)")
    }

    @Test func passwordsAreStoredOnlyAsSaltedSlowHashes() throws {
        let harness = try Harness(productionKeyDerivation: true)
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let shared = password("same")
        harness.secrets.append(shared)
        var first = WebBrowser(server), second = WebBrowser(server)
        try first.register("first", shared)
        try second.register("second", shared)

        let database = try DatabaseQueue(
            path: harness.paths.home.appendingPathComponent("notes.db").path,
            configuration: {
                var configuration = Configuration()
                configuration.readonly = true
                return configuration
            }())
        let rows = try database.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT login_name, password_salt, password_iterations, password_hash FROM accounts WHERE login_name IN ('first', 'second') ORDER BY login_name"
            )
        }
        #expect(rows.count == 2)
        let salts = rows.compactMap { $0["password_salt"] as Data? }, hashes = rows.compactMap { $0["password_hash"] as Data? }
        #expect(Set(salts).count == 2 && salts.allSatisfy { $0.count == 16 }, "a random salt per account")
        #expect(Set(hashes).count == 2 && hashes.allSatisfy { $0.count == 32 }, "the same password, different hashes")
        #expect(rows.allSatisfy { ($0["password_iterations"] as Int? ?? 0) >= 600_000 })
        try harness.expectNoSecretLeaked()  // the password is in no file, output or log
    }
}

/// Just the id of `tresor note list --json`'s notes.
struct NoteSummaryProbe: Decodable {
    var id: String
}
