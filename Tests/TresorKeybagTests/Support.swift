import Crypto
import Foundation
import Synchronization
import TresorSystem

@testable import TresorKeybag

/// A fresh home in a temporary folder, removed when the test's value goes away.
final class TemporaryHome {
    let root: URL
    let paths: TresorPaths

    init() {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-keybag-\(UUID().uuidString)")
        paths = TresorPaths(home: root.appendingPathComponent("home").path, environment: ["HOME": root.path])
    }

    deinit { try? FileManager.default.removeItem(at: root) }

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
