import Foundation
import Testing
import TresorNotesDomain
import TresorWebStore

@testable import TresorWebServer

/// Which live-update streams the server's maintenance ends when their session is over.
@Suite struct WebEventsTests {
    static func session(_ name: String) -> WebSession {
        SessionTokens.newSession(for: WebAccount(id: AccountID(rawValue: "acct-\(name)"), name: name, isLocal: false), client: nil, now: Date())
            .session
    }

    /// The events of a finished stream.
    static func names(of stream: AsyncStream<WebEvents.Event>) async -> [String] {
        var names: [String] = []
        for await event in stream { names.append(event.name) }
        return names
    }

    @Test func aStreamWhoseSessionWasCheckedAndFoundOverIsToldAndEnded() async throws {
        let events = WebEvents()
        let ended = Self.session("ana")
        let (_, stream) = try #require(events.open(for: ended))
        events.endStreams(checked: [ended.tokenDigest], live: [])
        try #require(events.count == 0)
        #expect(await Self.names(of: stream) == ["signedOut"])
    }

    /// The page of a session started while the maintenance was looking sessions up opened its
    /// stream after the digests were taken: that lookup says nothing of it, and it stays open.
    @Test func aStreamOpenedDuringTheLookupIsNotEnded() throws {
        let events = WebEvents()
        let earlier = Self.session("ana"), started = Self.session("bob")
        _ = try #require(events.open(for: earlier))
        let checked = Set(events.sessionDigests)
        _ = try #require(events.open(for: started))
        events.endStreams(checked: checked, live: [earlier.tokenDigest])
        #expect(events.count == 2)
        #expect(Set(events.sessionDigests) == [earlier.tokenDigest, started.tokenDigest])
    }
}
