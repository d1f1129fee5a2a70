import Foundation
import Testing
import TresorSystem

@testable import TresorSecretService

/// The approved reads a generic client may write back unchanged (docs/SECURITY.md, "Generic clients").
@Suite struct ApprovedReadsTests {
    let git = RunningProcess(pid: 4_100, startTime: 77)
    let helper = "exe:/usr/lib/git-core/git-credential-libsecret"

    func read(_ id: String, collection: String = "login", program: String? = nil, parent: RunningProcess? = nil) -> ApprovedReads.Read {
        ApprovedReads.Read(collection: collection, id: id, program: program ?? helper, parent: parent ?? git)
    }

    @Test func aReadIsWrittenBackOnceByTheSameProgramOfTheSameProcess() {
        var reads = ApprovedReads()
        reads.record(read("7"))
        let anotherItem = reads.take(read("8")), anotherCollection = reads.take(read("7", collection: "session"))
        let anotherProgram = reads.take(read("7", program: "exe:/usr/bin/secret-tool"))
        // The same pid, reused by a later process, is not the process that ran the read.
        let aLaterProcess = reads.take(read("7", parent: RunningProcess(pid: 4_100, startTime: 90)))
        #expect(!anotherItem && !anotherCollection && !anotherProgram && !aLaterProcess)
        let first = reads.take(read("7")), second = reads.take(read("7"))
        #expect(first && !second, "written back once")
    }

    @Test func aReadIsForgottenAfterItsLifetimeAndPastTheLimit() {
        var reads = ApprovedReads()
        let then = Date(timeIntervalSince1970: 1_000_000)
        reads.record(read("7"), now: then)
        let withinItsLifetime = reads.take(read("7"), now: then.addingTimeInterval(ApprovedReads.lifetime - 1))
        reads.record(read("7"), now: then)
        let afterIt = reads.take(read("7"), now: then.addingTimeInterval(ApprovedReads.lifetime))
        #expect(withinItsLifetime && !afterIt)

        for id in 0...ApprovedReads.limit {
            reads.record(read("\(id)"), now: then.addingTimeInterval(Double(id)))
        }
        #expect(reads.reads.count == ApprovedReads.limit)
        let oldest = reads.take(read("0"), now: then), newest = reads.take(read("\(ApprovedReads.limit)"), now: then)
        #expect(!oldest && newest, "the oldest goes first")
    }
}
