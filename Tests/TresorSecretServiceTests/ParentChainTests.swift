import Foundation
import Testing
import TresorSystem

@testable import TresorSecretService

/// The parent chain a "for this session" approval of a generic client remembers
/// (docs/SECURITY.md, "Generic clients").
@Suite struct ParentChainTests {
    @Test func theParentChainRunsUpToTheSessionLeader() throws {
        let chain = ProcessAncestors.of(getpid())
        if getsid(0) == getpid() {
            #expect(chain.isEmpty, "a session's leader has no ancestor in it")
        } else {
            #expect(chain.first == getppid(), "the parent first")
        }
        #expect(!chain.contains(1) && chain.count <= ProcessAncestors.limit)
        #expect(Set(chain).count == chain.count, "no process twice")
        #expect(ProcessAncestors.of(Int32.max).isEmpty, "no such process: no chain")
    }

    /// The parent as the one process it is: its pid and start time, which tell it from a later
    /// process given the same pid.
    @Test func theParentIsItsPidAndStartTime() throws {
        let parent = try #require(ProcessAncestors.parent(of: getpid()))
        #expect(parent.pid == getppid())
        let stat = try String(contentsOfFile: "/proc/\(getppid())/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        #expect(parent.startTime == UInt64(fields[19]), "field 22 of stat")
        #expect(ProcessAncestors.parent(of: Int32.max) == nil, "no such process: no parent")
    }
}
