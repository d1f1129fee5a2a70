import Crypto
import Foundation
import Synchronization
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

extension TemporaryHome {
    convenience init() { self.init(prefix: "tresor-keybag") }

    func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }
}

/// A wall clock the test moves by hand.
final class TestClock: Sendable {
    private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
    var read: @Sendable () -> Date { { [self] in now.withLock { $0 } } }
}

/// Cheap KDF for tests; production uses ``KeybagSettings/production`` (600,000 rounds).
func testSettings(_ clock: TestClock = TestClock()) -> KeybagSettings {
    .insecureForTesting(kdfRounds: 1_000, clock: clock.read)
}

func passcode(_ text: String) -> Passcode { try! Passcode(text) }

func bytes(of key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
