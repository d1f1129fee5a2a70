import Foundation
import Testing
import TresorSyncProtocol

@testable import TresorSyncClient

/// How a device reads the relay's live-events stream (docs/SYNC.md, "Live updates"): events cut
/// anywhere by the network, comments and unknown events skipped, a bad or endless one refused.
struct SyncEventParserTests {
    @Test func eventsCutAnywhereArriveWholeAndCommentsAreSkipped() throws {
        let stream =
            "retry: 2000\n: sync live updates\n\nevent: records\ndata: {\"counter\":7}\n\n: keep-alive\n\n"
            + "event: notes\ndata: {\"counter\":12}\n\nevent: notes\ndata: {\"counter\":12,\"settings\":3}\n\nevent: circle\ndata: {}\n\n"
            + "event: resync\r\ndata: {}\r\n\r\nevent: somethingNew\ndata: {}\n\nevent: deviceRemoved\ndata: {}\n\n"
        let bytes = Array(stream.utf8)
        for cut in [1, 3, 17, bytes.count] {
            var parser = SyncEventParser()
            var events: [SyncLiveEvent] = []
            for start in stride(from: 0, to: bytes.count, by: cut) {
                events += try parser.feed(Data(bytes[start..<min(start + cut, bytes.count)]))
            }
            #expect(
                events == [.records(counter: 7), .notes(counter: 12), .notes(counter: 12), .circle, .resync, .deviceRemoved],
                "cut every \(cut) bytes")
        }
    }

    @Test func aRecordsEventWithoutItsCounterOrAnEndlessOneIsRefused() throws {
        var parser = SyncEventParser()
        #expect(throws: SyncClientError.garbage("a records event without its counter")) {
            try parser.feed(Data("event: records\ndata: nonsense\n\n".utf8))
        }
        var notes = SyncEventParser()
        #expect(throws: SyncClientError.garbage("a notes event without its counter")) {
            try notes.feed(Data("event: notes\ndata: {}\n\n".utf8))
        }
        var endless = SyncEventParser()
        #expect(throws: SyncClientError.tooLarge(limit: SyncClient.eventLimit)) {
            try endless.feed(Data(repeating: UInt8(ascii: "a"), count: SyncClient.eventLimit + 1))
        }
    }
}
