import Foundation
import Synchronization
import Testing
import TresorSystem

/// A worker's queue is bounded by its depth and, when given, by what the waiting items cost:
/// a caller that gets ahead waits; an item costlier than the limit still goes when none waits.
@Suite struct OrderedWorkerTests {
    /// A gate the worker's thread waits at, and what it has done.
    final class Gate: @unchecked Sendable {
        let condition = ThreadCondition()
        var open = false
        var started = 0
        var done: [Int] = []

        func pass(_ item: Int) {
            condition.lock()
            started += 1
            condition.broadcast()
            while !open { condition.wait() }
            done.append(item)
            condition.unlock()
        }

        func waitUntilStarted(_ count: Int) {
            condition.lock()
            while started < count { condition.wait() }
            condition.unlock()
        }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }
    }

    @Test func submittingPastTheCostLimitWaitsUntilTheThreadTakesAnItem() throws {
        let gate = Gate()
        let worker = OrderedWorker<Int>(name: "test-cost", depth: .max, costLimit: 10) { gate.pass($0) }
        try worker.submit(0, cost: 4)
        gate.waitUntilStarted(1)  // item 0 is on the thread, no longer waiting
        try worker.submit(1, cost: 4)
        try worker.submit(2, cost: 4)  // 8 waiting: within the limit
        let returned = Atomic(false)
        let late = Background {
            try worker.submit(3, cost: 4)  // 12 would wait: it must wait
            returned.store(true, ordering: .sequentiallyConsistent)
        }
        usleep(200_000)
        let returnedEarly = returned.load(ordering: .sequentiallyConsistent)
        #expect(!returnedEarly, "a submit past the cost limit returned before the thread took anything")
        gate.release()
        try late.value()
        try worker.finish()
        #expect(gate.done == [0, 1, 2, 3])
    }

    @Test(.timeLimit(.minutes(1))) func anItemCostlierThanTheLimitGoesWhenNoneWaits() throws {
        let worker = OrderedWorker<Int>(name: "test-cost", depth: 4, costLimit: 10) { _ in }
        try worker.submit(0, cost: 1_000)
        try worker.submit(1, cost: 1_000)
        try worker.finish()
    }
}
