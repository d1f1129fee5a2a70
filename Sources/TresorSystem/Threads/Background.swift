/// Work started on a thread of its own now and its result taken later: two slow, independent
/// steps on two cores — a backup's scrypt run beside the reading of the home it seals.
///
/// ```swift
/// let header = Background { try key.header(passphrase: passphrase) }
/// try writePayload()
/// try write(header.value())
/// ```
public final class Background<T: Sendable>: @unchecked Sendable {
    private let condition = ThreadCondition()
    private var result: Result<T, any Error>?

    /// Starts `work` on a new thread.
    /// - Parameter work: what to run; its result or error is kept for ``value()``.
    public init(_ work: @escaping @Sendable () throws -> T) {
        DetachedThread.start { [self] in
            let outcome = Result { try work() }
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the work to end.
    /// - Returns: what it returned.
    /// - Throws: what it threw.
    public func value() throws -> T {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }
}

/// Runs `other` on a thread of its own while `work` runs on this one — two slow, independent
/// steps (a passcode's KDF beside another KDF) on two cores — and waits for both.
/// - Parameters:
///   - other: the check `work`'s result must not be used without.
///   - work: the work of this thread.
/// - Returns: what `work` returned.
/// - Throws: `other`'s error first, then `work`'s.
public func alongside<T>(_ other: @escaping @Sendable () throws -> Void, _ work: () throws -> T) throws -> T {
    let check = Background(other)
    let result = Result { try work() }
    try check.value()
    return try result.get()
}
