import Glibc
import NIOCore
import Testing

@testable import TresorSyncClient

/// How a transport failure is said: what happened, in words — never the system call that saw
/// it (a server killed during an attachment's upload reset the connection mid-body, and the
/// user read NIO's `IOError` with its descriptor and errno).
@Suite struct SyncClientFailureTests {
    @Test(arguments: [
        (ECONNRESET, "the connection was reset"), (EPIPE, "the connection closed while the request was sent"),
        (ECONNREFUSED, "connection refused"),
    ])
    func aSocketFailureIsSaidInWords(errnoCode: Int32, words: String) {
        let error = SyncHTTP.failure(IOError(errnoCode: errnoCode, reason: "read(descriptor:pointer:size:)"))
        guard case .unreachable(let why) = error else {
            Issue.record("\(error) is not unreachable")
            return
        }
        #expect(why.hasPrefix(words), "\(why)")
        #expect(!why.contains("IOError") && !why.contains("descriptor") && !why.contains("errno"), "\(why)")
    }
}
