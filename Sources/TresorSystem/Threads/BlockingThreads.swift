import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Threads that wait for work after their call, for a while, so a busy program does not
/// create a thread per call.
final class BlockingThreads: Sendable {
    static let shared = BlockingThreads()
    /// How long a thread without work waits before it ends.
    private static let idleSeconds = 10

    private final class Worker: Sendable {
        let wake = DispatchSemaphore(value: 0)
        /// Set under the pool's lock before `wake` is signalled.
        let job = Mutex<(@Sendable () -> Void)?>(nil)
    }

    private let idle = Mutex<[Worker]>([])

    /// Runs `job` on an idle thread, or a new one.
    func run(_ job: @escaping @Sendable () -> Void) {
        let waiting = idle.withLock { workers -> Worker? in
            guard let worker = workers.popLast() else { return nil }
            worker.job.withLock { $0 = job }
            return worker
        }
        if let waiting {
            waiting.wake.signal()
        } else {
            // The thread is given the worker, not the job: a closure the thread kept would keep
            // what the job holds (a passcode, a secret) for the thread's whole life.
            let worker = Worker()
            worker.job.withLock { $0 = job }
            DetachedThread.start { [self] in self.serve(worker) }
        }
    }

    private func serve(_ worker: Worker) {
        repeat {
            runJob(of: worker)
            idle.withLock { $0.append(worker) }
        } while waitForJob(worker)
    }

    /// Runs the worker's job and lets go of it before the worker waits for the next: what it
    /// captured is released as soon as it has run.
    private func runJob(of worker: Worker) {
        let job = worker.job.withLock { job in
            defer { job = nil }
            return job
        }
        job?()
    }

    /// Waits until `run` gives the worker a job; false when it stayed idle long enough to leave.
    private func waitForJob(_ worker: Worker) -> Bool {
        while worker.wake.wait(timeout: .now() + .seconds(Self.idleSeconds)) == .timedOut {
            // Still idle: leave. Else `run` took this worker meanwhile: its job is set and `wake`
            // is signalled, so the next wait returns at once.
            let leaves = idle.withLock { workers in
                guard let index = workers.firstIndex(where: { $0 === worker }) else { return false }
                workers.remove(at: index)
                return true
            }
            if leaves { return false }
        }
        return true
    }
}
