import Foundation
import Testing
import TresorSystem

@testable import TresorSecretService

/// The approved reads a generic client may write back unchanged (docs/SECURITY.md, "Generic clients").
@Suite struct ApprovedReadsTests {
    let git = RunningProcess(pid: 4_100, startTime: 77)
    let helper = "exe:/usr/lib/git-core/git-credential-libsecret"

    @Test func aReadIsWrittenBackOnceByTheSameProgramOfTheSameProcess() {
        var reads = ApprovedReads()
        reads.record(collection: "login", id: "7", program: helper, parent: git)
        #expect(reads.contains(collection: "login", id: "7", program: helper, parent: git))
        #expect(!reads.contains(collection: "login", id: "8", program: helper, parent: git), "another item")
        #expect(!reads.contains(collection: "session", id: "7", program: helper, parent: git), "another collection")
        #expect(!reads.contains(collection: "login", id: "7", program: "exe:/usr/bin/secret-tool", parent: git), "another program")
        // The same pid, reused by a later process, is not the process that ran the read.
        #expect(!reads.contains(collection: "login", id: "7", program: helper, parent: RunningProcess(pid: 4_100, startTime: 90)))
        reads.remove(collection: "login", id: "7", program: helper, parent: git)
        #expect(!reads.contains(collection: "login", id: "7", program: helper, parent: git), "written back once")
    }

    @Test func aReadIsForgottenAfterItsLifetimeAndPastTheLimit() {
        var reads = ApprovedReads()
        let then = Date(timeIntervalSince1970: 1_000_000)
        reads.record(collection: "login", id: "7", program: helper, parent: git, now: then)
        #expect(reads.contains(collection: "login", id: "7", program: helper, parent: git, now: then.addingTimeInterval(ApprovedReads.lifetime - 1)))
        #expect(!reads.contains(collection: "login", id: "7", program: helper, parent: git, now: then.addingTimeInterval(ApprovedReads.lifetime)))

        for id in 0...ApprovedReads.limit {
            reads.record(collection: "login", id: "\(id)", program: helper, parent: git, now: then)
        }
        #expect(reads.reads.count == ApprovedReads.limit)
        #expect(!reads.contains(collection: "login", id: "0", program: helper, parent: git, now: then), "the oldest goes first")
        #expect(reads.contains(collection: "login", id: "\(ApprovedReads.limit)", program: helper, parent: git, now: then))
    }
}
