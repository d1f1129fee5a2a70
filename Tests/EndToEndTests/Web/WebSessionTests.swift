import Foundation
import Testing
import TresorTestSupport

/// Web sessions against a real daemon (docs/WEB.md "The origin
/// token" and "Sessions end"): the cookie alone is no session; a keybag lock, `tresor note
/// lock-now` and a passcode change end the local account's sessions; `tresor web sessions`
/// lists and ends sessions without printing a token; a password change ends the account's
/// other sessions.
@Suite(.blocksItsThread, .serialized) struct WebSessionTests {
    static let passcode = "e2e-web-session-passcode"

    func password(_ who: String) -> String { "e2e-\(who)-password-\(UUID().uuidString.prefix(8))" }

    /// A browser registered as `name`, its password and tokens declared secret.
    func registered(_ name: String, _ server: WebServerAddress, _ harness: Harness, userAgent: String? = nil) throws -> WebBrowser {
        let pass = password(name)
        harness.secrets.append(pass)
        var browser = WebBrowser(server)
        browser.userAgent = userAgent
        #expect(try browser.register(name, pass).status == 201)
        harness.secrets += [browser.token, browser.originToken].compactMap { $0 }
        return browser
    }

    /// The local account signed in with the passcode.
    func signedInLocal(_ server: WebServerAddress, _ harness: Harness) throws -> WebBrowser {
        var browser = WebBrowser(server)
        #expect(try browser.signIn("local", Self.passcode).status == 200)
        harness.secrets += [browser.token, browser.originToken].compactMap { $0 }
        return browser
    }

    @Test func aCookieWithoutTheOriginTokenIsUnauthorized() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try registered("alice", server, harness)
        let bob = try registered("bob", server, harness)
        let note = try alice.createNote(title: "alice's", body: "alice's body")

        // What another port of 127.0.0.1 receives: the cookie. On every route, GET included: 401.
        var cookieOnly = alice
        cookieOnly.originToken = nil
        var tokenOnly = alice
        tokenOnly.token = nil
        var wrongToken = alice
        wrongToken.originToken = bob.originToken ?? "x"
        for (what, browser) in [
            ("the cookie alone", cookieOnly), ("the origin token alone", tokenOnly), ("another session's origin token", wrongToken),
        ] {
            for (method, path) in WebAPITests.apiRoutes + [("GET", "/api/notes/\(note)"), ("POST", "/api/account/password")] {
                let response = try browser.request(method, path, json: method == "GET" || method == "DELETE" ? nil : ["x": 1])
                #expect(response.status == 401 && response.code == "unauthorized", "\(method) \(path) with \(what) → \(response.status)")
                #expect(
                    !response.text.contains("csrfToken") && !response.text.contains("alice"),
                    "\(method) \(path) with \(what) answered \(response.text)")
            }
        }
        let originToken = try #require(alice.originToken, "sign-in answers the origin token")
        #expect(originToken.count == 43 && originToken != alice.token && originToken != alice.csrf)
        let session = try alice.get("/api/session")
        #expect(session.status == 200 && session.json?["originToken"] == nil, "the origin token is handed out at sign-in only")
        #expect(try alice.get("/api/notes/\(note)").status == 200, "and the session still works")

        // Two cookies (one planted with a narrower path, sent first): the one the origin token names counts.
        let both = try server.send(
            "GET", "/api/session",
            headers: [
                ("Cookie", "tresor_session=\(try #require(bob.token)); tresor_session=\(try #require(alice.token))"),
                ("X-Tresor-Origin-Token", originToken),
            ])
        #expect(both.status == 200 && (both.json?["account"] as? [String: Any])?["name"] as? String == "alice")
        let planted = try server.send(
            "GET", "/api/session",
            headers: [
                ("Cookie", "tresor_session=\(try #require(bob.token))"), ("X-Tresor-Origin-Token", originToken),
            ])
        #expect(planted.status == 401, "a planted cookie with the page's origin token is another account: not signed in")
        try harness.expectNoSecretLeaked()
    }

    @Test func lockLockNowAndPasscodeChangeEndTheLocalAccountsSessions() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try registered("alice", server, harness)

        var local = try signedInLocal(server, harness)
        #expect(try local.get("/api/session").status == 200)
        // Another keychain's lock is not the login keybag's: the local account stays signed in.
        let work = "e2e-web-session-work-passcode"
        harness.secrets.append(work)
        #expect(try harness.tresor(["keychain", "create", "work", "--passcode-stdin"], input: "\(work)\n\(work)\n").succeeded)
        #expect(try harness.tresor(["lock", "--keychain", "work"]).succeeded)
        #expect(try local.get("/api/session").status == 200, "locking another keychain ended the local account's session")
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try local.get("/api/session").status == 401, "tresor lock ends the local account's web sessions")
        #expect(try alice.get("/api/session").status == 200, "another account's session stays")

        local = try signedInLocal(server, harness)  // unlocks the keybag too
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(try local.get("/api/session").status == 401, "tresor note lock-now ends the local account's web sessions")
        #expect(try alice.get("/api/session").status == 200)

        local = try signedInLocal(server, harness)
        let newPasscode = "e2e-web-session-new-passcode"
        harness.secrets.append(newPasscode)
        let changed = try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(Self.passcode)\n\(newPasscode)\n\(newPasscode)\n")
        #expect(changed.succeeded, "\(changed.stderr)")
        #expect(try local.get("/api/session").status == 401, "a passcode change ends the local account's web sessions")
        #expect(try alice.get("/api/session").status == 200)
        var again = WebBrowser(server)
        #expect(try again.signIn("local", newPasscode).status == 200)
        try harness.expectNoSecretLeaked()
    }

    @Test func webSessionsAreListedAndEndedFromTheCLI() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let alice = try registered(
            "alice", server, harness, userAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
        let bob = try registered("bob", server, harness)

        let listed = try harness.tresor(["web", "sessions", "--json"])
        #expect(listed.succeeded, "\(listed.stderr)")
        let sessions = try #require((try? JSONSerialization.jsonObject(with: Data(listed.stdout.utf8))) as? [[String: Any]])
        #expect(sessions.compactMap { $0["account"] as? String }.sorted() == ["alice", "bob"])
        let aliceID = try #require(sessions.first { $0["account"] as? String == "alice" }?["id"] as? String)
        let aliceSession = try #require(sessions.first { $0["id"] as? String == aliceID })
        #expect(aliceSession["browser"] as? String == "Firefox on Linux" && aliceSession["address"] as? String == "127.0.0.1", "\(aliceSession)")
        #expect(sessions.first { $0["account"] as? String == "bob" }?["browser"] == nil, "no User-Agent, no browser")
        let text = try harness.tresor(["web", "sessions"])
        #expect(text.succeeded && text.stdout.contains(aliceID) && text.stdout.contains("bob"))
        let aliceLine = text.stdout.split(separator: "\n").first { $0.contains(aliceID) }
        #expect(aliceLine?.contains("alice  Firefox on Linux from 127.0.0.1  signed in") == true, "\(text.stdout)")
        for output in [listed.stdout, text.stdout] {
            for token in [alice.token, alice.originToken, alice.csrf, bob.token, bob.originToken, bob.csrf].compactMap({ $0 }) {
                #expect(!output.contains(token), "tresor web sessions printed a token")
            }
        }

        let unknown = try harness.tresor(["web", "sessions", "end", "0000000000000000"])
        #expect(!unknown.succeeded && unknown.stderr.contains("no web session"), "\(unknown.stderr)")
        #expect(try alice.get("/api/session").status == 200 && bob.get("/api/session").status == 200, "a wrong id ends nothing")
        #expect(try harness.tresor(["web", "sessions", "end", aliceID]).succeeded)
        #expect(try alice.get("/api/session").status == 401)
        #expect(try bob.get("/api/session").status == 200)
        let all = try harness.tresor(["web", "sessions", "end", "--all"])
        #expect(all.succeeded && all.stdout.contains("1"), "\(all.stdout)")
        #expect(try bob.get("/api/session").status == 401)
        let none = try harness.tresor(["web", "sessions", "--json"])
        #expect(
            (try? JSONSerialization.jsonObject(with: Data(none.stdout.utf8))) as? [Any] != nil && none.stdout.contains("[")
                && !none.stdout.contains("bob"))
        try harness.expectNoSecretLeaked()
    }

    @Test func aPasswordChangeEndsTheAccountsOtherSessions() throws {
        let harness = try Harness()
        let server = try harness.startWebDaemon(passcode: Self.passcode)
        let old = password("carol"), new = password("carol-new")
        harness.secrets += [old, new]
        var carol = WebBrowser(server), carolElsewhere = WebBrowser(server)
        #expect(try carol.register("carol", old).status == 201)
        #expect(try carolElsewhere.signIn("carol", old).status == 200)
        let dave = try registered("dave", server, harness)

        let mismatch = try carol.post("/api/account/password", ["currentPassword": old, "newPassword": new, "newPasswordAgain": new + "x"])
        #expect(mismatch.status == 400 && mismatch.code == "param")
        let wrong = try carol.post("/api/account/password", ["currentPassword": old + "x", "newPassword": new, "newPasswordAgain": new])
        #expect(wrong.status == 401 && wrong.code == "authFailed")
        #expect(try carolElsewhere.get("/api/session").status == 200, "a refused change ends nothing")
        let logged = harness.daemonLog
        #expect(logged.contains("password change failed") && !logged.contains("password change succeeded"), "the log says it was refused")

        let changed = try carol.post("/api/account/password", ["currentPassword": old, "newPassword": new, "newPasswordAgain": new])
        #expect(changed.status == 200 && changed.json?["endedSessions"] as? Int == 1, "\(changed.text)")
        #expect(try carolElsewhere.get("/api/session").status == 401, "the account's other session ended")
        #expect(try carol.get("/api/session").status == 200, "the session that changed it stays")
        #expect(try dave.get("/api/session").status == 200, "another account's session stays")
        var later = WebBrowser(server)
        #expect(try later.signIn("carol", old).status == 401)
        #expect(try later.signIn("carol", new).status == 200)

        let local = try signedInLocal(server, harness)
        let refused = try local.post("/api/account/password", ["currentPassword": Self.passcode, "newPassword": new, "newPasswordAgain": new])
        #expect(refused.status == 403 && refused.code == "forbidden", "the local account's password is the passcode")
        try harness.expectNoSecretLeaked()
    }
}
