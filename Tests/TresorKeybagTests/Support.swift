import Crypto
import Foundation
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

extension TemporaryHome {
    convenience init() { self.init(prefix: "tresor-keybag") }

    func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url) }
}

func bytes(of key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
