import Dispatch

/// Independent pieces of work split in two halves, the second on another core (Dispatch's
/// `concurrentPerform`): a group of an age file's chunks, a run of notes being restored. Worth it
/// only for pieces that each take far longer than a hand-over (tens of microseconds).
public enum TwoThreads {
    /// Each element transformed, in order, half of them on another thread.
    /// - Parameters:
    ///   - elements: the pieces of work.
    ///   - transform: what is done with each; it must be safe to run on two threads at once.
    /// - Returns: each element's result or error, in the elements' order (one element's error
    ///   does not stop the others).
    public static func map<Element: Sendable, Transformed: Sendable>(
        _ elements: [Element], _ transform: @Sendable (Element) throws -> Transformed
    ) -> [Result<Transformed, any Error>] {
        let results = Results<Transformed>(count: elements.count)
        defer { results.free() }
        let half = (elements.count + 1) / 2
        DispatchQueue.concurrentPerform(iterations: elements.count > 1 ? 2 : 1) { part in
            for index in part == 0 ? 0..<half : half..<elements.count {
                results.slots[index] = Result { try transform(elements[index]) }
            }
        }
        return results.slots.map { $0! }
    }

    /// The results, each slot written by one of the two threads: memory of its own, not an
    /// array's storage (two threads writing into one array at once is not safe).
    private struct Results<Value>: @unchecked Sendable {
        let slots: UnsafeMutableBufferPointer<Result<Value, any Error>?>

        init(count: Int) {
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil)
        }

        func free() {
            slots.deinitialize()
            slots.deallocate()
        }
    }
}
