#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for work that blocks (a pipe read, a long request), so that it holds
/// none of Dispatch's few workers. Foundation's `Thread` would do, but it lives in the part of
/// Foundation the CLI does not link (BENCHMARKS.md, "Measured design choices").
public enum DetachedThread {
    /// Runs `body` on a new detached thread — or here, if no thread can be had.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, box)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Box>.fromOpaque(box).takeRetainedValue().body()
        }
    }

    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
