import Foundation
import Synchronization
import Testing
import TresorProtocol

@testable import TresorDaemon

/// Socket API connections that hold a slot without using it are closed (`SocketConnectionDeadlines`);
/// those the daemon works for, or must keep, are not; one process gets its share of connections
/// and no more (`SocketAPIServer`). On a real Unix socket, with a deadline of a second or two.
@Suite(.serialized) struct SocketConnectionDeadlineTests {
    let transport = SocketTransportTests()

    @Test func anIdleConnectionIsClosedAndEveryAnswerSaysWhen() async throws {
        try await transport.withServer(idleSeconds: 2) { path in
            let unused = try RawConnection(path: path)
            let used = try RawConnection(path: path)
            let answer = try used.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "hello"))
            #expect(answer.headers["keep-alive"] == "timeout=2")
            // Well within its two seconds, the connection still serves.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try used.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "again")).body == "again")
            #expect(try unused.readToEnd().isEmpty, "a connection that sent nothing is closed")
            #expect(try used.readToEnd().isEmpty, "a connection idle after its answer is closed")
        }
    }

    @Test func aHeadOrABodyThatStopsComingIsClosed() async throws {
        try await transport.withServer(idleSeconds: 1) { path in
            let request = SocketTransportTests.request("POST", "/echo", body: "a body of some length")
            let inBody = try RawConnection(path: path)
            try inBody.send(String(request.dropLast(5)))
            // A head dripped a byte at a time (a byte each 200 ms, 6 s for 30) is no progress
            // until it is whole: the daemon closes it, and the next byte cannot be sent.
            let dripping = try RawConnection(path: path)
            var sent = 0
            for byte in Array(request.utf8.prefix(30)) {
                guard (try? dripping.send([byte][...])) != nil else { break }
                sent += 1
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(sent < 30, "a head dripped a byte at a time was kept open")
            #expect(try inBody.readToEnd().isEmpty, "a body that stopped arriving is closed")
        }
    }

    @Test func aClientThatStopsTakingALargeAnswerIsClosed() async throws {
        try await transport.withServer(idleSeconds: 1) { path in
            let client = try RawConnection(path: path)
            try client.send(SocketTransportTests.request("GET", "/large-answer"))
            try await Task.sleep(for: .milliseconds(2500))
            // What the socket held is there, then the end: kept open, the rest would have come
            // (and the read then waited for a next answer until its timeout).
            let received = try client.readToEnd()
            #expect(received.count > 0 && received.count < SocketTransportTests.largeAnswerBytes, "\(received.count) bytes")
        }
    }

    @Test func noDeadlineRunsWhileTheAnswerIsWorkedOn() async throws {
        try await transport.withServer(idleSeconds: 1) { path in
            let client = try RawConnection(path: path)
            #expect(try client.readResponse(after: SocketTransportTests.request("GET", "/slow")).body == "slow")
            #expect(try client.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "next")).body == "next")
        }
    }

    @Test func aConnectionHoldingSomethingIsKeptHoweverLongItIsIdle() async throws {
        // The first connection to be asked about holds something; any other does not.
        let kept = Mutex<ConnectionID?>(nil)
        let keepsOpen: @Sendable (ConnectionID) -> Bool = { id in
            kept.withLock { kept in
                if kept == nil { kept = id }
                return kept == id
            }
        }
        try await transport.withServer(idleSeconds: 1, keepsOpen: keepsOpen) { path in
            let holding = try RawConnection(path: path)
            _ = try holding.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "hold"))
            try await Task.sleep(for: .milliseconds(1500))
            let other = try RawConnection(path: path)
            #expect(try other.readToEnd().isEmpty, "a connection holding nothing is closed")
            #expect(try holding.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "still")).body == "still")
        }
    }

    @Test func aProcessPastItsShareIsToldSoAndTheConnectionClosed() async throws {
        try await transport.withServer(perProcess: 2) { path in
            let one = try RawConnection(path: path), two = try RawConnection(path: path)
            #expect(try one.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "1")).status == 200)
            #expect(try two.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "2")).status == 200)
            let third = try RawConnection(path: path)
            let refused = try third.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "3"))
            #expect(refused.status == 503)
            #expect(refused.errorCode == .unavailable)
            #expect(refused.errorMessage?.contains("holds 2 connections") == true, "\(refused.errorMessage ?? "")")
            #expect(refused.headers["connection"] == "close")
            #expect(try third.readToEnd().isEmpty)
            // Once one of the process's connections closes, it has room again.
            _ = consume one
            var served = false
            for _ in 0..<50 where !served {
                let next = try RawConnection(path: path)
                served = try next.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "4")).status == 200
                if !served { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(served)
            #expect(try two.readResponse(after: SocketTransportTests.request("POST", "/echo", body: "5")).body == "5")
        }
    }
}
