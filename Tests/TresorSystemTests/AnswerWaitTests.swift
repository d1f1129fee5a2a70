import Foundation
import Testing

@testable import TresorSystem

/// ``AnswerWait``: what it receives is what `recv` would, whether the answer comes while it polls
/// or after; and it stops polling when polling does not pay.
@Suite struct AnswerWaitTests {
    /// A connected pair of Unix stream sockets, closed at the end of `body`.
    func withSocketPair(_ body: (_ client: Int32, _ server: Int32) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        try body(fds[0], fds[1])
    }

    func send(_ text: String, on fd: Int32) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func receive(_ wait: inout AnswerWait, from fd: Int32) -> (count: Int, text: String) {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { wait.receive(from: fd, into: $0) }
        return (count, String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self))
    }

    @Test func anAnswerThatHasArrivedIsCaughtWhilePolling() throws {
        try withSocketPair { client, server in
            var wait = AnswerWait(processors: 2)
            send("HTTP/1.1 200 OK", on: server)
            let answer = receive(&wait, from: client)
            #expect(answer.count == 15 && answer.text == "HTTP/1.1 200 OK")
            #expect(wait.caught == 1 && wait.missed == 0 && wait.pollsNext)
        }
    }

    @Test func anAnswerLaterThanTheWindowIsReceivedAsleep_andTheNextIsNotPolledFor() throws {
        try withSocketPair { client, server in
            var wait = AnswerWait(processors: 2)
            let late = Thread {
                usleep(30_000); send("late", on: server)
            }
            late.start()
            let answer = receive(&wait, from: client)
            #expect(answer.text == "late")  // it waited for it, polling and then asleep
            #expect(wait.caught == 0 && wait.missed == 1)
            #expect(!wait.pollsNext)

            // The one answer of the pause is waited for asleep; polling resumes after it.
            send("next", on: server)
            #expect(receive(&wait, from: client).text == "next")
            #expect(wait.caught == 0 && wait.missed == 1 && wait.pollsNext)
            send("then", on: server)
            #expect(receive(&wait, from: client).text == "then")
            #expect(wait.caught == 1)
        }
    }

    @Test func missesInARowDoubleThePause_upToTheLongest_andACatchStartsItOver() {
        var wait = AnswerWait(processors: 2)
        var pauses: [Int] = []
        for _ in 0..<9 {
            wait.record(answeredWhilePolling: false)
            pauses.append(wait.pause)
        }
        #expect(pauses == [1, 2, 4, 8, 16, 32, 64, 64, 64])
        #expect(AnswerWait.longestPause == 64)
        wait.record(answeredWhilePolling: true)
        wait.record(answeredWhilePolling: false)
        #expect(wait.pause == 1)
    }

    @Test func theEndOfTheStreamAndErrorsAreReturnedAsRecvReturnsThem() throws {
        try withSocketPair { client, server in
            var wait = AnswerWait(processors: 2)
            shutdown(server, Int32(SHUT_WR))
            #expect(receive(&wait, from: client).count == 0)
        }
        var wait = AnswerWait(processors: 2)
        #expect(receive(&wait, from: -1).count == -1)
        #expect(errno == EBADF)
        // Asleep too (the pause after a miss), the error comes back instead of a wait.
        wait.record(answeredWhilePolling: false)
        #expect(receive(&wait, from: -1).count == -1 && errno == EBADF)
    }

    @Test func withOneProcessorItNeverPolls() throws {
        try withSocketPair { client, server in
            var wait = AnswerWait(processors: 1)
            #expect(!wait.pollsNext)
            send("answer", on: server)
            #expect(receive(&wait, from: client).text == "answer")
            #expect(wait.caught == 0 && wait.missed == 0)
        }
    }
}
