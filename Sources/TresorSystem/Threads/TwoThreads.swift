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
        mapHalves(elements) { half in half.map { element in Result { try transform(element) } } }
    }

    /// Each element's result, in order, each half of `elements` handed whole to `transform` on
    /// a thread of its own — for work that shares something across a half (one read
    /// transaction for its lookups).
    /// - Parameters:
    ///   - elements: the pieces of work.
    ///   - transform: the results of one half's elements, in order (as many as it was given); it
    ///     must be safe to run on two threads at once.
    /// - Returns: each element's result or error, in the elements' order; a half whose
    ///   `transform` threw gives that error for each of its elements.
    public static func mapHalves<Element: Sendable, Transformed: Sendable>(
        _ elements: [Element], _ transform: @Sendable (ArraySlice<Element>) throws -> [Result<Transformed, any Error>]
    ) -> [Result<Transformed, any Error>] {
        guard !elements.isEmpty else { return [] }
        let middle = (elements.count + 1) / 2
        let halves = [elements[..<middle], elements[middle...]]
        let results = Slots<[Result<Transformed, any Error>]>(count: halves.count)
        defer { results.free() }
        DispatchQueue.concurrentPerform(iterations: elements.count > 1 ? 2 : 1) { part in
            let half = halves[part]
            do {
                let transformed = try transform(half)
                precondition(transformed.count == half.count, "TwoThreads.mapHalves: \(transformed.count) results for \(half.count) elements")
                results.slots[part] = transformed
            } catch {
                results.slots[part] = half.map { _ in .failure(error) }
            }
        }
        return results.slots.flatMap { $0 ?? [] }
    }

    /// The halves' results, each slot written by one of the two threads: memory of its own, not
    /// an array's storage (two threads writing into one array at once is not safe).
    private struct Slots<Value>: @unchecked Sendable {
        let slots: UnsafeMutableBufferPointer<Value?>

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
