import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A Unix file descriptor that travelled in a message (`h`), owned by this object: closed
/// exactly once — by ``close()``, by whoever ``take()`` handed it to, or when the last
/// reference goes. Close-on-exec, so no program the daemon starts inherits it.
///
/// libdbus gives every reader a descriptor of its own (a duplicate), so each ``DBusValue``
/// read from a message owns a different one; the message keeps its own until it is freed.
public final class DBusFileDescriptor: Sendable, Equatable, CustomStringConvertible {
    private let descriptor: Atomic<Int32>

    /// Takes ownership of `descriptor` and marks it close-on-exec.
    /// - Parameter descriptor: an open file descriptor nobody else will close.
    public init(adopting descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
        self.descriptor = Atomic(descriptor)
    }

    deinit { close() }

    /// The descriptor while this object still owns it; nil once closed or taken.
    public var descriptorIfOpen: Int32? {
        let descriptor = descriptor.load(ordering: .acquiring)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Hands the descriptor over: the caller closes it from now on.
    /// - Returns: the descriptor, or nil when it was taken or closed already.
    public func take() -> Int32? {
        let descriptor = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Closes the descriptor now, unless it was closed or taken already.
    public func close() {
        if let descriptor = take() { _ = Glibc.close(descriptor) }
    }

    /// Two values are the same descriptor only when they are the same object.
    public static func == (lhs: DBusFileDescriptor, rhs: DBusFileDescriptor) -> Bool { lhs === rhs }

    public var description: String { descriptorIfOpen.map { "fd \($0)" } ?? "fd (closed)" }
}
