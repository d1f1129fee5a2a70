import Foundation
import Synchronization
import Testing
import TresorNotesDomain
import TresorTestSupport
import TresorWebStore

/// One conformance suite of the web storage boundary's session, counter, invite and event
/// protocols (docs/ARCHITECTURE.md, "The web storage boundary"): the same checks on the
/// embedded backend, always, and on PostgreSQL (a throwaway server; under CI=true a missing
/// PostgreSQL fails).
@Suite("Web storage conformance: embedded")
struct EmbeddedStoreConformanceTests {
    @Test(arguments: StoreCheck.all)
    func conformance(_ check: StoreCheck) async throws {
        try await check.run(on: .embedded)
    }
}

@Suite("Web storage conformance: PostgreSQL", .enabled(if: TestPostgres.shouldRun))
struct PostgresStoreConformanceTests {
    @Test(arguments: StoreCheck.all)
    func conformance(_ check: StoreCheck) async throws {
        try await check.run(on: .postgres)
    }
}

/// One behaviour every backend must show.
struct StoreCheck: Sendable, CustomTestStringConvertible {
    var name: String
    var body: @Sendable (WebStores) async throws -> Void

    var testDescription: String { name }

    func run(on backend: Backend) async throws {
        let stores = try await backend.makeStores()
        do {
            try await body(stores)
            await stores.close()
        } catch {
            await stores.close()
            throw error
        }
    }

    static let alice = WebAccount(id: AccountID(rawValue: "acct-alice"), name: "alice", isLocal: false)
    static let bob = WebAccount(id: AccountID(rawValue: "acct-bob"), name: "bob", isLocal: false)
    static let local = WebAccount(id: .local, name: "local", isLocal: true)
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static let all: [StoreCheck] = [
        StoreCheck(name: "a started session is found by its two tokens, and by nothing else") { stores in
            let started = try await stores.sessions.start(for: alice, now: t0)
            let found = try #require(try await stores.sessions.session(forToken: started.token, originToken: started.originToken, now: t0 + 1))
            #expect(found.account == alice)
            #expect(found.id == started.session.id)
            #expect(found.csrfToken == started.session.csrfToken)
            #expect(found.lastUsed == t0 + 1)
            let other = try await stores.sessions.start(for: bob, now: t0)
            #expect(try await stores.sessions.session(forToken: started.token, originToken: other.originToken, now: t0 + 1) == nil)
            #expect(try await stores.sessions.session(forToken: SessionTokens.random(), originToken: started.originToken, now: t0 + 1) == nil)
            #expect(try await stores.sessions.session(forToken: "short", originToken: started.originToken, now: t0 + 1) == nil)
        },
        StoreCheck(name: "a session ends after its idle time, slides with use, and ends at its absolute lifetime") { stores in
            let lifetimes = stores.sessions.lifetimes
            let started = try await stores.sessions.start(for: alice, now: t0)
            let idle = TimeInterval(lifetimes.idleSeconds)
            var now = t0
            // Used just before each idle expiry, it stays live until its absolute lifetime.
            while now + idle - 1 < t0 + TimeInterval(lifetimes.sessionSeconds) {
                now = now + idle - 1
                #expect(try await stores.sessions.session(forToken: started.token, originToken: started.originToken, now: now) != nil)
            }
            #expect(
                try await stores.sessions.session(
                    forToken: started.token, originToken: started.originToken, now: t0 + TimeInterval(lifetimes.sessionSeconds)) == nil)
            let idleOne = try await stores.sessions.start(for: bob, now: t0)
            #expect(try await stores.sessions.session(forToken: idleOne.token, originToken: idleOne.originToken, now: t0 + idle) == nil)
        },
        StoreCheck(
            name:
                "a session's use may be recorded up to the recording interval late: never live past its idle time, never ended sooner than that interval before it"
        ) { stores in
            let lifetimes = stores.sessions.lifetimes
            let idle = TimeInterval(lifetimes.idleSeconds), interval = lifetimes.useRecordingInterval
            #expect(interval > 0 && interval <= 60 && interval <= idle / 10)
            func use(_ started: StartedSession, at now: Date) async throws -> Bool {
                try await stores.sessions.session(forToken: started.token, originToken: started.originToken, now: now) != nil
            }
            // Used every half interval — most uses not recorded by a store that records seldom.
            let keptAlive = try await stores.sessions.start(for: alice, now: t0), leftIdle = try await stores.sessions.start(for: bob, now: t0)
            var last = t0
            for _ in 0..<25 {
                last += interval / 2
                #expect(try await use(keptAlive, at: last))
                #expect(try await use(leftIdle, at: last))
            }
            #expect(try await use(keptAlive, at: last + idle - interval - 1))
            #expect(try await !use(leftIdle, at: last + idle))
        },
        StoreCheck(name: "sign-outs end the sessions they select, and count them") { stores in
            let a1 = try await stores.sessions.start(for: alice, now: t0)
            let a2 = try await stores.sessions.start(for: alice, now: t0 + 1)
            let b1 = try await stores.sessions.start(for: bob, now: t0 + 2)
            let l1 = try await stores.sessions.start(for: local, now: t0 + 3)
            #expect(try await stores.sessions.list(now: t0 + 4).map(\.id) == [a1, a2, b1, l1].map(\.session.id))
            #expect(try await stores.sessions.end(.account(alice.id, except: a2.session.id)) == 1)
            #expect(try await stores.sessions.session(forToken: a1.token, originToken: a1.originToken, now: t0 + 5) == nil)
            #expect(try await stores.sessions.session(forToken: a2.token, originToken: a2.originToken, now: t0 + 5) != nil)
            #expect(try await stores.sessions.end(.localAccount) == 1)
            #expect(try await stores.sessions.end(.id(b1.session.id)) == 1)
            #expect(try await stores.sessions.end(.id(b1.session.id)) == 0)
            #expect(try await stores.sessions.end(.all) == 1)
            #expect(try await stores.sessions.list(now: t0 + 6).isEmpty)
        },
        StoreCheck(name: "a session keeps where it was signed in from, for its listing") { stores in
            let client = WebSessionClient(address: "192.0.2.7", browser: "Firefox on Linux")
            let started = try await stores.sessions.start(for: alice, client: client, now: t0)
            let plain = try await stores.sessions.start(for: bob, now: t0 + 1)
            let listed = try await stores.sessions.list(now: t0 + 2)
            #expect(listed.first { $0.id == started.session.id }?.client == client)
            #expect(listed.first { $0.id == plain.session.id }.map { $0.client == nil } == true)
            let used = try await stores.sessions.session(forToken: started.token, originToken: started.originToken, now: t0 + 3)
            #expect(used?.client == client)
        },
        StoreCheck(name: "a secure session counts while reported recently, and is forgotten on request") { stores in
            let started = try await stores.sessions.start(for: alice, now: t0)
            let session = started.session
            #expect(try await stores.sessions.secureSessionOpen(of: session, now: t0) == false)
            try await stores.sessions.reportSecureSession(session, open: true, now: t0 + 1)
            #expect(try await stores.sessions.secureSessionOpen(of: session, now: t0 + 2))
            let secure = TimeInterval(stores.sessions.lifetimes.secureSessionSeconds)
            #expect(try await stores.sessions.secureSessionOpen(of: session, now: t0 + 1 + secure) == false)
            try await stores.sessions.reportSecureSession(session, open: true, now: t0 + 3)
            try await stores.sessions.reportSecureSession(session, open: false, now: t0 + 4)
            #expect(try await stores.sessions.secureSessionOpen(of: session, now: t0 + 5) == false)
            try await stores.sessions.reportSecureSession(session, open: true, now: t0 + 6)
            try await stores.sessions.forgetSecureSessions()
            #expect(try await stores.sessions.secureSessionOpen(of: session, now: t0 + 7) == false)
        },
        StoreCheck(name: "expired sessions are removed, live ones named among digests") { stores in
            let old = try await stores.sessions.start(for: alice, now: t0)
            let fresh = try await stores.sessions.start(for: bob, now: t0 + 500)
            let now = t0 + TimeInterval(stores.sessions.lifetimes.idleSeconds) + 1
            let digests = [old.session.tokenDigest, fresh.session.tokenDigest, SessionTokens.digest(SessionTokens.random())]
            #expect(try await stores.sessions.liveSessions(among: digests, now: now) == [fresh.session.tokenDigest])
            #expect(try await stores.sessions.removeExpired(now: now) == 1)
            #expect(try await stores.sessions.list(now: now).map(\.id) == [fresh.session.id])
        },
        StoreCheck(name: "counters are read, changed and removed in one step") { stores in
            let name = ThrottleKey(.name, "alice"), address = ThrottleKey(.address, "192.0.2.1")
            let seen = try await stores.throttles.update([name, address]) { counters in
                let seen = counters.count
                counters[name] = ThrottleCounter(count: 3, last: t0, inFlight: 1)
                counters[address] = ThrottleCounter(count: 1, last: t0 + 1)
                return seen
            }
            #expect(seen == 0)
            let read = try await stores.throttles.update([name, address, ThrottleKey(.registration, "192.0.2.1")]) { $0 }
            #expect(read == [name: ThrottleCounter(count: 3, last: t0, inFlight: 1), address: ThrottleCounter(count: 1, last: t0 + 1)])
            try await stores.throttles.update([name]) { $0[name] = nil }
            #expect(try await stores.throttles.update([name]) { $0[name] } == nil)
            try await stores.throttles.removeQuiet(before: t0 + 2)
            #expect(try await stores.throttles.update([address]) { $0[address] } == nil)
        },
        StoreCheck(name: "concurrent counter updates are atomic: none is lost") { stores in
            let key = ThrottleKey(.address, "198.51.100.7")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<40 {
                    group.addTask {
                        try await stores.throttles.update([key]) { counters in
                            var counter = counters[key] ?? ThrottleCounter(count: 0, last: t0)
                            counter.count += 1
                            counters[key] = counter
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await stores.throttles.update([key]) { $0[key]?.count } == 40)
        },
        StoreCheck(name: "the sign-in throttle over the store checks at most the free passwords of a burst") { stores in
            let throttle = LoginThrottle(store: stores.throttles)
            let allowed = Locked(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        if try await throttle.reserveSignIn(name: "carol", address: "203.0.113.9", now: t0) == nil {
                            allowed.withLock { $0 += 1 }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(allowed.withLock { $0 } == LoginThrottle.Limit.perName.freeFailures)
        },
        StoreCheck(name: "a counter reads back at the very instant it was written: the free failures pass at any time") { stores in
            let throttle = LoginThrottle(store: stores.throttles)
            let now = Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_789)
            for attempt in 0..<LoginThrottle.Limit.perName.freeFailures {
                let wait = try await throttle.reserveSignIn(name: "heidi", address: "192.0.2.\(attempt)", now: now)
                #expect(wait == nil, "attempt \(attempt)")
                try await throttle.signInFailed(name: "heidi", address: "192.0.2.\(attempt)", now: now)
            }
            #expect(try await throttle.reserveSignIn(name: "heidi", address: "192.0.2.99", now: now) == 1)
        },
        StoreCheck(name: "within the free attempts no attempt waits, even one whose time was taken before another's finished") { stores in
            // Two instances: a registration finishes (its `last` is 12:00:00.5) while another,
            // whose request began at 12:00:00.2, waits for the counter.
            let throttle = LoginThrottle(store: stores.throttles)
            #expect(try await throttle.reserveRegistration(address: "198.51.100.4", now: t0 + 0.1) == nil)
            try await throttle.registrationFinished(address: "198.51.100.4", now: t0 + 0.5)
            #expect(try await throttle.reserveRegistration(address: "198.51.100.4", now: t0 + 0.2) == nil)
            #expect(try await throttle.reserveSignIn(name: "ivan", address: "198.51.100.4", now: t0 + 0.1) == nil)
            try await throttle.signInFailed(name: "ivan", address: "198.51.100.4", now: t0 + 0.5)
            #expect(try await throttle.reserveSignIn(name: "ivan", address: "198.51.100.4", now: t0 + 0.2) == nil)
        },
        StoreCheck(name: "shares with names nobody has are free up to the limit, then wait; a name that exists costs nothing") { stores in
            let throttle = LoginThrottle(store: stores.throttles)
            let free = LoginThrottle.Limit.unknownParticipantsPerAccount.freeFailures
            for attempt in 0..<(free * 2) {
                #expect(try await throttle.reserveParticipantLookup(account: "acct-mallory", now: t0) == nil, "existing name \(attempt)")
                try await throttle.participantLookupFinished(account: "acct-mallory", nameExists: true, now: t0)
            }
            for attempt in 0..<free {
                #expect(try await throttle.reserveParticipantLookup(account: "acct-mallory", now: t0) == nil, "unknown name \(attempt)")
                try await throttle.participantLookupFinished(account: "acct-mallory", nameExists: false, now: t0)
            }
            #expect(try await throttle.reserveParticipantLookup(account: "acct-mallory", now: t0) == 1, "past the free ones, a wait")
            #expect(try await throttle.reserveParticipantLookup(account: "acct-trent", now: t0) == nil, "counted per account")
        },
        StoreCheck(name: "an invite is redeemed once, with its code, before it expires") { stores in
            let (code, expires) = try await stores.invites.issue(name: "dave", now: t0)
            #expect(expires == t0 + WebInvitePurpose.registration.lifetime)
            #expect(try await stores.invites.redeem(name: "dave", code: SessionTokens.random(), now: t0 + 1) == false)
            #expect(try await stores.invites.redeem(name: "erin", code: code, now: t0 + 1) == false)
            #expect(try await stores.invites.redeem(name: "dave", code: code, now: t0 + 1))
            #expect(try await stores.invites.redeem(name: "dave", code: code, now: t0 + 2) == false)
            let (replaced, _) = try await stores.invites.issue(name: "frank", now: t0)
            let (current, _) = try await stores.invites.issue(name: "frank", now: t0 + 1)
            #expect(try await stores.invites.redeem(name: "frank", code: replaced, now: t0 + 2) == false)
            #expect(try await stores.invites.redeem(name: "frank", code: current, now: t0 + 1 + WebInvitePurpose.registration.lifetime) == false)
        },
        StoreCheck(name: "a password-reset code lasts a day, once, and is no invite (nor an invite a reset code)") { stores in
            let (reset, expires) = try await stores.passwordResets.issue(name: "heidi", now: t0)
            #expect(expires == t0 + 24 * 3600)
            let (invite, _) = try await stores.invites.issue(name: "heidi", now: t0)
            #expect(try await stores.invites.redeem(name: "heidi", code: reset, now: t0 + 1) == false)
            #expect(try await stores.passwordResets.redeem(name: "heidi", code: invite, now: t0 + 1) == false)
            #expect(try await stores.passwordResets.redeem(name: "heidi", code: reset, now: t0 + 24 * 3600) == false, "expired")
            let (again, _) = try await stores.passwordResets.issue(name: "heidi", now: t0)
            #expect(try await stores.passwordResets.redeem(name: "heidi", code: again, now: t0 + 60))
            #expect(try await stores.passwordResets.redeem(name: "heidi", code: again, now: t0 + 61) == false, "used")
            #expect(try await stores.invites.redeem(name: "heidi", code: invite, now: t0 + 61), "the invite is its own")
        },
        StoreCheck(name: "of concurrent redemptions of one invite, exactly one succeeds") { stores in
            let (code, _) = try await stores.invites.issue(name: "grace", now: t0)
            let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { try await stores.invites.redeem(name: "grace", code: code, now: t0 + 1) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(successes == 1)
        },
        StoreCheck(name: "published events reach the listeners, and stop when they stop listening") { stores in
            let received = Locked<[WebEvent]>([])
            let token = stores.events.listen { event in received.withLock { $0.append(event) } }
            let change = NoteChange(kind: .shared, noteID: "note-1", revision: 7, accounts: [alice.id, bob.id])
            try await stores.events.publish(.note(change))
            try await stores.events.publish(.secureSessionEnded(account: alice.id, reason: "locked"))
            try await waitUntil("the change to be heard") { received.withLock { $0.count } >= 2 }
            #expect(received.withLock { $0 } == [.note(change), .secureSessionEnded(account: alice.id, reason: "locked")])
            stores.events.stopListening(token)
            try await stores.events.publish(.note(change))
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.withLock { $0.count } == 2)
        },
    ]
}
