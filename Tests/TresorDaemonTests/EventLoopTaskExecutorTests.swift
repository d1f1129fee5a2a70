import Dispatch
import NIOCore
import NIOPosix
import Testing
import TresorSystem

@testable import TresorDaemon

/// The socket API runs each connection's requests on that connection's event loop
/// (`EventLoopTaskExecutor`): the work must really run there, stay there across awaits — also
/// after `offloaded` work on another thread — and the loop must stay free for others meanwhile.
@Suite struct EventLoopTaskExecutorTests {
    @Test func tasksPreferringALoopRunOnItAcrossAwaits() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let (before, afterSleep, afterOffload, offloadedOnLoop) = await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
            let before = loop.inEventLoop
            try? await Task.sleep(for: .milliseconds(5))
            let afterSleep = loop.inEventLoop
            let offloadedOnLoop = (try? await offloaded { loop.inEventLoop }) ?? true
            return (before, afterSleep, loop.inEventLoop, offloadedOnLoop)
        }
        #expect(before && afterSleep && afterOffload)
        #expect(!offloadedOnLoop)  // offloaded work runs on a Dispatch thread, not on the loop
        #expect(!loop.inEventLoop)  // and this test's own task is back where it was
        try await group.shutdownGracefully()
    }

    @Test func childTasksInheritTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let onLoop = await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
            await withTaskGroup(of: Bool.self) { tasks in
                for _ in 0..<8 { tasks.addTask { loop.inEventLoop } }
                return await tasks.reduce(true) { $0 && $1 }
            }
        }
        #expect(onLoop)
        try await group.shutdownGracefully()
    }
}
