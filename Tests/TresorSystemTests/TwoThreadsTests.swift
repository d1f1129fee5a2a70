import Foundation
import Testing
import TresorSystem

/// Work split in two halves comes back whole and in order, each element's error (or its half's) in its place.
struct TwoThreadsTests {
    struct Odd: Error, Equatable { let value: Int }

    @Test(arguments: [0, 1, 2, 3, 64, 1_001])
    func everyResultComesBackInOrderWithItsOwnError(count: Int) throws {
        let results = TwoThreads.map(Array(0..<count)) { value -> Int in
            if value % 7 == 3 { throw Odd(value: value) }
            usleep(value % 5 == 0 ? 100 : 0)  // the halves finish at different times
            return value * 2
        }
        #expect(results.count == count)
        for (value, result) in results.enumerated() {
            if value % 7 == 3 {
                #expect(throws: Odd(value: value)) { try result.get() }
            } else {
                #expect(try result.get() == value * 2)
            }
        }
    }

    /// Each half goes whole to its thread; a half that throws is that error for each of its
    /// elements, and the other half's results stay in their places.
    @Test(arguments: [1, 2, 7, 64])
    func aHalfIsHandedWholeAndItsErrorIsEachOfItsElements(count: Int) throws {
        let elements = Array(0..<count)
        let results = TwoThreads.mapHalves(elements) { half -> [Result<Int, any Error>] in
            if half.contains(0) && count > 1 { throw Odd(value: -1) }
            return half.map { .success($0 * 3) }
        }
        #expect(results.count == count)
        let firstHalf = (count + 1) / 2
        for (value, result) in results.enumerated() {
            if count > 1 && value < firstHalf {
                #expect(throws: Odd(value: -1)) { try result.get() }
            } else {
                #expect(try result.get() == value * 3)
            }
        }
        #expect(TwoThreads.mapHalves([Int]()) { _ -> [Result<Int, any Error>] in throw Odd(value: 0) }.isEmpty)
    }
}
