import Foundation

/// A random number generator, as Apple's `SecRandomRef`: there is one, the system's.
public typealias SecRandomRef = OpaquePointer

/// The system's generator, as on Apple platforms (nil there too).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes, as `SecRandomCopyBytes`
/// does on Apple platforms: keychain code draws its keys and salts with it.
/// - Parameters:
///   - rnd: The generator: `kSecRandomDefault`.
///   - count: How many bytes to write.
///   - bytes: Where to write them.
/// - Returns: `errSecSuccess`; `errSecParam` for a negative count.
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    // The standard library's generator is the kernel's (getrandom on Linux).
    var generator = SystemRandomNumberGenerator()
    var written = 0
    while written < count {
        var word = generator.next()
        let length = min(MemoryLayout<UInt64>.size, count - written)
        withUnsafeBytes(of: &word) { (bytes + written).copyMemory(from: $0.baseAddress!, byteCount: length) }
        written += length
    }
    return errSecSuccess
}
