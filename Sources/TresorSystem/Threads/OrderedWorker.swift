import FoundationEssentials

/// One thread that does a stream's other half — sealing and writing chunks while the caller
/// prepares the next (an age file, an attachment's file) — so a stream uses two cores. Work is
/// taken in the order it was given, at most ``depth`` items (and, if given, ``costLimit`` of their
/// bytes) ahead, so memory stays at a few chunks. The first error stops the thread and is thrown
/// to the caller at its next call.
///
/// The thread ends when ``close()`` is called or the last ``OrderedWorker/Owner`` goes; a stream
/// abandoned halfway leaves no thread behind.
public final class OrderedWorker<Item>: @unchecked Sendable {
    // @unchecked: every mutable property is read and written with `condition` held.
    private let condition = ThreadCondition()
    private var items: [(item: Item, cost: Int)] = []
    /// The sum of the waiting items' costs.
    private var waitingCost = 0
    private var failure: (any Error)?
    private var closed = false
    private var stopped = false
    private let depth: Int
    private let costLimit: Int
    private let work: (Item) throws -> Void

    /// How many items may wait for the thread.
    public static var defaultDepth: Int { 8 }

    /// Starts the thread, which runs `work` on each item given to ``submit(_:)``, in order.
    /// - Parameters:
    ///   - name: the thread's name as `top` shows it (15 bytes at most).
    ///   - depth: how many items may wait for the thread.
    ///   - costLimit: how much the waiting items may cost together (bytes, as ``submit(_:cost:)``
    ///     is told); an item is always taken when none waits, whatever it costs.
    ///   - work: what the thread does with each item; its first error stops the thread.
    public init(name: String, depth: Int = defaultDepth, costLimit: Int = .max, _ work: @escaping (Item) throws -> Void) {
        self.depth = depth
        self.costLimit = costLimit
        self.work = work
        DetachedThread.start { [self] in
            nameThisThread(name)
            run()
        }
    }

    /// Hands `item` to the thread, waiting while ``depth`` items are waiting already, or while
    /// adding `cost` to the waiting items' would pass ``costLimit``.
    /// - Parameters:
    ///   - item: the next item.
    ///   - cost: what it holds in memory, in the unit of the worker's `costLimit`.
    /// - Throws: the error the thread stopped on.
    public func submit(_ item: Item, cost: Int = 0) throws {
        condition.lock()
        defer { condition.unlock() }
        while (items.count >= depth || !items.isEmpty && waitingCost + cost > costLimit) && failure == nil && !stopped { condition.wait() }
        if let failure { throw failure }
        precondition(!closed, "OrderedWorker.submit after close")
        items.append((item, cost))
        waitingCost += cost
        condition.broadcast()
    }

    /// Lets the thread finish what it was given, and waits for it.
    /// - Throws: the error the thread stopped on.
    public func finish() throws {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while !stopped { condition.wait() }
        if let failure { throw failure }
    }

    /// Stops the thread after its current item, dropping what waits; does not wait for it.
    public func close() {
        condition.lock()
        closed = true
        items.removeAll()
        waitingCost = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Stops the thread after its current item, dropping what waits, and waits until it has
    /// stopped: what the work uses (a file) may then be closed.
    public func stop() {
        close()
        condition.lock()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while let item = next() {
            do {
                try work(item)
            } catch {
                condition.lock()
                failure = error
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// The next item, or nil (the thread then stops) once closed with nothing left.
    private func next() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !closed { condition.wait() }
        guard !items.isEmpty else {
            stopped = true
            condition.broadcast()
            return nil
        }
        // Taken out at once, not left for a later clean-up: a 1 MiB chunk the thread is done
        // with must not stay referenced (the rest moves up: cheap at these depths).
        let (item, cost) = items.removeFirst()
        waitingCost -= cost
        condition.broadcast()
        return item
    }

    /// Held by the stream that uses the worker: when the last holder goes, the thread is told to
    /// stop, so an abandoned stream leaves no thread waiting forever.
    public final class Owner: @unchecked Sendable {
        public let worker: OrderedWorker
        public init(_ worker: OrderedWorker) { self.worker = worker }
        deinit { worker.close() }
    }
}

/// The reading half of a stream on a thread of its own: `produce` runs ahead of the caller, at
/// most ``OrderedWorker/defaultDepth`` results ahead, and ``next()`` hands them over in order —
/// each value, then the end (nil) or the error the thread stopped on, again at every later call.
public final class ReadAhead<Element>: @unchecked Sendable {
    // @unchecked: every mutable property is read and written with `condition` held.
    private let condition = ThreadCondition()
    private var ready: [Result<Element?, any Error>] = []
    private var abandoned = false
    /// Set when the thread has stopped calling `produce`.
    private var stopped = false

    private let depth: Int
    private let produce: () throws -> Element?

    /// Starts the thread, which calls `produce` until it returns nil or throws.
    /// - Parameters:
    ///   - name: the thread's name as `top` shows it (15 bytes at most).
    ///   - depth: how many results may wait for the caller.
    ///   - produce: the next value, nil at the end.
    public init(name: String, depth: Int = OrderedWorker<Element>.defaultDepth, _ produce: @escaping () throws -> Element?) {
        self.depth = depth
        self.produce = produce
        DetachedThread.start { [self] in
            nameThisThread(name)
            run()
            condition.lock()
            stopped = true
            condition.broadcast()
            condition.unlock()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while ready.count >= depth && !abandoned { condition.wait() }
            let stop = abandoned
            condition.unlock()
            if stop { return }
            let result = Result { try produce() }
            condition.lock()
            ready.append(result)
            condition.broadcast()
            condition.unlock()
            guard case .success(let value) = result, value != nil else { return }
        }
    }

    /// The next value, or nil at the end.
    /// - Returns: the value, nil at the end.
    /// - Throws: the error reading stopped on.
    public func next() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty { condition.wait() }
        let result = ready[0]
        // The end and an error stay where they are: every later call gives them again.
        if case .success(let value) = result, value != nil {
            ready.removeFirst()
            condition.broadcast()
        }
        return try result.get()
    }

    /// Stops the thread before its next read and waits until it stopped — `produce` may use
    /// what lives only as long as the caller's scope (an open file) —; what it read ahead is
    /// dropped.
    public func abandon() {
        condition.lock()
        abandoned = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    /// Held by the stream that reads: when the last holder goes, the thread stops reading.
    public final class Owner: @unchecked Sendable {
        public let reader: ReadAhead
        public init(_ reader: ReadAhead) { self.reader = reader }
        deinit { reader.abandon() }
    }
}

/// Names the calling thread as `top` and `/proc/<pid>/task/<tid>/comm` show it (15 bytes at
/// most): through `/proc/thread-self/comm`, the same as `pthread_setname_np`, which Swift's
/// Glibc module does not offer.
private func nameThisThread(_ name: String) {
    try? Data(name.utf8.prefix(15)).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
}
