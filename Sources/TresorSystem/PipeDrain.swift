import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads a pipe to its end on a thread of its own.
///
/// A parent that reads a child's standard output to its end before its standard error (or
/// writes the child's input first) waits forever once the child fills the other pipe: both
/// then wait on each other. Draining each pipe on its own thread rules that out.
public final class PipeDrain: Sendable {
    private let collected = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading file descriptor `fd` at once. The caller keeps it open until ``data()``
    /// has returned.
    public init(_ fd: Int32) {
        DetachedThread.start { [self] in
            let data = Data(readingToEndOf: fd)
            collected.withLock { $0 = data }
            done.signal()
        }
    }

    /// Everything the pipe carried, once its writer has closed it.
    public func data() -> Data {
        done.wait()
        return collected.withLock { $0 }
    }
}
