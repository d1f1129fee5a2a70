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
}
