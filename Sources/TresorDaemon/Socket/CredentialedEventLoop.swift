import CTresorSystem
import Foundation
import NIOCore
import Synchronization
import TresorSystem

/// An event loop of the socket API's own: one thread waiting in `epoll_wait` for its
/// connections (``CredentialedSocketChannel``), the tasks given to it and its timers.
///
/// It exists because SwiftNIO's loops read a stream socket with `read(2)`, which drops the
/// credentials the kernel attaches to every message (`SO_PASSCRED`): the daemon must know who
/// *sent* each request, not only who connected (docs/SECURITY.md §3.4). Everything above the
/// socket — NIO's HTTP/1.1 handlers, ``SocketRequestHandler``, Hummingbird's router, tasks on
/// ``EventLoopTaskExecutor`` — runs on it as on a NIO loop: one thread reads, answers and writes
/// a request, so a lookup wakes one thread, as before.
final class CredentialedEventLoop: EventLoop, @unchecked Sendable {
    // @unchecked: `channels` and `wantsRead` are touched on the loop's thread only; the rest is
    // behind `queue`'s lock, or set once before the thread is shared.
    private let epoll: Int32
    private let wake: Int32
    private nonisolated(unsafe) var thread = pthread_t()

    private struct Timer {
        var id: UInt64
        var deadline: NIODeadline
        var run: @Sendable () -> Void
    }

    private struct Queue {
        var tasks: [@Sendable () -> Void] = []
        var timers: [Timer] = []
        var nextTimerID: UInt64 = 0
    }

    private let queue = Mutex(Queue())
    private var channels: [UInt64: CredentialedSocketChannel] = [:]
    private var nextToken: UInt64 = 1
    /// Channels that asked to read while their socket still had bytes (edge-triggered epoll
    /// says nothing more until it runs dry).
    private var wantsRead: [UInt64] = []

    /// Starts the loop's thread; it runs for the life of the process, as NIO's do.
    init() {
        epoll = tresor_epoll_create()
        wake = tresor_eventfd()
        precondition(epoll >= 0 && wake >= 0, "cannot create the socket API's event loop (errno \(errno))")
        _ = tresor_epoll_add(epoll, wake, 0, 0)
        let started = DispatchSemaphore(value: 0)
        DetachedThread.start { [self] in
            thread = pthread_self()
            started.signal()
            run()
        }
        started.wait()
    }

    var inEventLoop: Bool { pthread_equal(pthread_self(), thread) != 0 }

    func execute(_ task: @escaping @Sendable () -> Void) {
        queue.withLock { $0.tasks.append(task) }
        if !inEventLoop { wakeUp() }
    }

    func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise = makePromise(of: T.self)
        let id = queue.withLock { queue in
            queue.nextTimerID += 1
            queue.timers.append(
                Timer(id: queue.nextTimerID, deadline: deadline) {
                    do { promise.assumeIsolated().succeed(try task()) } catch { promise.fail(error) }
                })
            return queue.nextTimerID
        }
        if !inEventLoop { wakeUp() }
        return Scheduled(promise: promise) { [weak self] in
            let removed = self?.queue.withLock { queue in
                guard let index = queue.timers.firstIndex(where: { $0.id == id }) else { return false }
                queue.timers.remove(at: index)
                return true
            }
            if removed == true { promise.fail(EventLoopError.cancelled) }
        }
    }

    func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }

    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        // Shared for the life of the process, like `MultiThreadedEventLoopGroup.singleton`.
        queue.async { callback(EventLoopError.unsupportedOperation) }
    }

    func next() -> any EventLoop { self }
    func any() -> any EventLoop { self }
    func makeIterator() -> EventLoopIterator { EventLoopIterator([self]) }

    /// Serves `channel` from now on. On the loop.
    func register(_ channel: CredentialedSocketChannel) throws -> UInt64 {
        preconditionInEventLoop()
        let token = nextToken
        nextToken += 1
        guard tresor_epoll_add(epoll, channel.descriptor, token, 1) == 0 else {
            throw IOError(errnoCode: errno, reason: "epoll_ctl")
        }
        channels[token] = channel
        return token
    }

    /// Stops serving a channel about to close its socket. On the loop.
    func unregister(_ channel: CredentialedSocketChannel, token: UInt64) {
        _ = tresor_epoll_remove(epoll, channel.descriptor)
        channels[token] = nil
    }

    /// `channel` wants to read and its socket may hold bytes: read on this turn of the loop.
    func readSoon(token: UInt64) {
        wantsRead.append(token)
    }

    private func wakeUp() {
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    private func run() {
        var tokens = [UInt64](repeating: 0, count: 64)
        var flags = [Int32](repeating: 0, count: 64)
        while true {
            let timeout = nextTimeout()
            let count = tresor_epoll_wait(epoll, &tokens, &flags, 64, timeout)
            for index in 0..<Int(max(count, 0)) {
                if tokens[index] == 0 {
                    var drained: UInt64 = 0
                    _ = Glibc.read(wake, &drained, 8)
                } else if let channel = channels[tokens[index]] {
                    channel.ready(readable: flags[index] & 1 != 0, writable: flags[index] & 2 != 0, hungUp: flags[index] & 4 != 0)
                }
            }
            runDueTimers()
            runTasks()
            // Reads asked for meanwhile, once each per turn so no connection starves the others.
            let reading = wantsRead
            wantsRead.removeAll(keepingCapacity: true)
            for token in reading { channels[token]?.readIfWanted() }
        }
    }

    private func nextTimeout() -> Int32 {
        if !wantsRead.isEmpty { return 0 }
        return queue.withLock { queue in
            if !queue.tasks.isEmpty { return 0 }
            guard let first = queue.timers.min(by: { $0.deadline < $1.deadline }) else { return -1 }
            let nanoseconds =
                first.deadline.uptimeNanoseconds > NIODeadline.now().uptimeNanoseconds
                ? first.deadline.uptimeNanoseconds - NIODeadline.now().uptimeNanoseconds : 0
            return Int32(min((nanoseconds + 999_999) / 1_000_000, 60_000))
        }
    }

    private func runDueTimers() {
        let now = NIODeadline.now()
        let due = queue.withLock { queue -> [Timer] in
            guard queue.timers.contains(where: { $0.deadline <= now }) else { return [] }
            let due = queue.timers.filter { $0.deadline <= now }
            queue.timers.removeAll { $0.deadline <= now }
            return due.sorted { $0.deadline < $1.deadline }
        }
        for timer in due { timer.run() }
    }

    private func runTasks() {
        let tasks = queue.withLock { queue -> [@Sendable () -> Void] in
            defer { queue.tasks = [] }
            return queue.tasks
        }
        for task in tasks { task() }
    }
}
