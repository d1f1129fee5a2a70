import Foundation
import Testing
import TresorSystem

/// Work split in two halves comes back whole and in order, each element's error in its place.
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
}
