import Crypto
import Foundation
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

extension TemporaryHome {
    convenience init() { self.init(prefix: "tresor-keybag") }

    func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }
}

/// Cheap KDF for tests; production uses ``KeybagSettings/production`` (600,000 rounds).
func testSettings(_ clock: TestClock = TestClock()) -> KeybagSettings {
    .insecureForTesting(kdfRounds: 1_000, clock: clock.read)
}

func passcode(_ text: String) -> Passcode { try! Passcode(text) }

func bytes(of key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
