#if canImport(Glibc)
import Glibc
#endif

/// A lock with a condition to wait on, for threads handing work to each other
/// (``OrderedWorker``, ``ReadAhead``): POSIX's mutex and condition variable. Foundation's
/// `NSCondition` would do, but it lives in the part of Foundation the CLI does not link.
public final class ThreadCondition: @unchecked Sendable {
    // @unchecked: the mutex and the condition are made for use from several threads.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Waits until another thread calls ``broadcast()``; the lock must be held, and is held again
    /// on return (which may also come without a broadcast: wait in a loop on the state).
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Wakes every thread waiting in ``wait()``.
    public func broadcast() { pthread_cond_broadcast(condition) }
}
