import Foundation
import Testing
import TresorTestSupport

/// `.blocksItsThread` (TresorTestSupport) runs a blocking test off Swift concurrency's threads:
/// as many test cases as those threads, each blocked until an async task has run, all finish.
/// On Swift concurrency's threads they would hold every one, and no task could run. The task
/// waits its turn behind every test the run has queued on those threads, so the limit is long: a
/// held pool fails at any limit.
@Suite(.blocksItsThread) struct BlocksItsThreadTests {
    @Test(arguments: 0..<max(2, ProcessInfo.processInfo.activeProcessorCount))
    func blockedTestsLeaveSwiftConcurrencysThreadsFree(_ index: Int) {
        let ran = DispatchSemaphore(value: 0)
        Task.detached { ran.signal() }
        #expect(ran.wait(timeout: .now() + 600) == .success, "case \(index): an async task could not run while this test blocked")
    }
}
