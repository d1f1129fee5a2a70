import Foundation
import Synchronization
import TresorKit

/// Which Tresor daemon the `SecItem…` functions talk to: the default home's (`$TRESOR_HOME`,
/// else `~/.local/share/tresor`), started when needed — or the `Keychain` given to
/// ``use(_:)``. Apple-platform code never needs this; tests and programs that keep a home of
/// their own do.
public enum SecItemKeychain {
    /// The keychain in use, and the home a new one goes to (that of the keychain last given
    /// to ``use(_:)``).
    private static let current = Mutex<(keychain: Keychain?, paths: TresorPaths)>((nil, TresorPaths()))

    /// Sends every later `SecItem…` call to `keychain`.
    /// - Parameter keychain: A connected TresorKit keychain.
    public static func use(_ keychain: Keychain) {
        current.withLock { $0 = (keychain, keychain.client.paths) }
    }

    /// The keychain of ``using(_:_:)``, for the calls of its body only.
    @TaskLocal private static var scoped: Keychain?

    /// Sends the `SecItem…` calls `body` makes (on its task, and the tasks that task starts) to
    /// `keychain`, and leaves every other call where it went: a program — or a test — that
    /// talks to several daemons at once.
    /// - Parameters:
    ///   - keychain: A connected TresorKit keychain.
    ///   - body: The code whose calls go to `keychain`.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func using<Result>(_ keychain: Keychain, _ body: () throws -> Result) rethrows -> Result {
        try $scoped.withValue(keychain, operation: body)
    }

    /// Runs `body` with the keychain, connecting first when needed. Calls may overlap: the
    /// keychain gives each its own connection.
    /// - Throws: ``SecItemFailure`` for every failure, with the status Apple would return.
    static func withKeychain<Result>(_ body: (Keychain) throws -> Result) throws(SecItemFailure) -> Result {
        do {
            let keychain = try scoped ?? connected()
            do {
                return try body(keychain)
            } catch TresorClientError.connectionClosedBeforeRequest {
                // A daemon that restarted since the last call: nothing was acted on, so the
                // request goes once more, on a new connection.
                guard scoped == nil else { return try body(keychain) }
                forget(keychain)
                return try body(try connected())
            } catch let error as TresorClientError {
                forget(keychain)
                throw error
            }
        } catch let failure as SecItemFailure {
            throw failure
        } catch let error as APIError {
            throw SecItemFailure(status(of: error), detail: error.message)
        } catch {
            throw SecItemFailure(errSecNotAvailable)
        }
    }

    /// The keychain in use, or a new one on the home last used.
    private static func connected() throws -> Keychain {
        let (keychain, paths) = current.withLock { ($0.keychain, $0.paths) }
        if let keychain { return keychain }
        let connected = try Keychain(paths: paths)
        return current.withLock { state in
            if let other = state.keychain { return other }  // another thread connected first
            state.keychain = connected
            return connected
        }
    }

    /// Drops `keychain` after a connection failure, unless another call replaced it already.
    private static func forget(_ keychain: Keychain) {
        current.withLock { if $0.keychain === keychain { $0.keychain = nil } }
    }

    /// Apple's status for a daemon error; the daemon's own codes that have no Security
    /// framework counterpart read as what an application would see on Apple platforms.
    static func status(of error: APIError) -> OSStatus {
        if let status = error.osStatus { return status }
        switch error.code {
        case .notInitialized, .keybagDamaged: return errSecNotAvailable
        case .noPasscodeSet: return errSecParam
        default: return errSecInternalComponent
        }
    }
}
