import Foundation
import TresorKit

/// Which Tresor daemon the `SecItem…` functions talk to: the default home's (`$TRESOR_HOME`,
/// else `~/.local/share/tresor`), started when needed — or the ``Keychain`` given to
/// ``use(_:)``. Apple-platform code never needs this; tests and programs that keep a home of
/// their own do.
public enum SecItemKeychain {
    /// The connection, behind a lock: TresorKit's `Keychain` is one socket, not Sendable.
    private final class Connection: @unchecked Sendable {
        let lock = NSLock()
        var keychain: Keychain?
        /// The home a new connection goes to: the one of the keychain last given to `use`.
        var paths = TresorPaths()
    }

    private static let current = Connection()

    /// Sends every later `SecItem…` call to `keychain`.
    /// - Parameter keychain: A connected TresorKit keychain.
    public static func use(_ keychain: Keychain) {
        current.lock.withLock {
            current.keychain = keychain
            current.paths = keychain.client.paths
        }
    }

    /// Runs `body` with the keychain, connecting first when needed. Calls are serialised: one
    /// connection answers one request at a time.
    /// - Throws: ``SecItemFailure`` for every failure, with the status Apple would return.
    static func withKeychain<Result>(_ body: (Keychain) throws -> Result) throws(SecItemFailure) -> Result {
        do {
            return try current.lock.withLock {
                do {
                    return try body(try connected())
                } catch TresorClientError.connectionClosedBeforeRequest {
                    // A daemon that restarted since the last call: nothing was acted on, so
                    // the request goes once more, on a new connection.
                    current.keychain = nil
                    return try body(try connected())
                } catch let error as TresorClientError {
                    current.keychain = nil
                    throw error
                }
            }
        } catch let failure as SecItemFailure {
            throw failure
        } catch let error as APIError {
            throw SecItemFailure(status(of: error))
        } catch {
            throw SecItemFailure(errSecNotAvailable)
        }
    }

    /// The open connection, or a new one to the home last used. Called with the lock held.
    private static func connected() throws -> Keychain {
        if let keychain = current.keychain { return keychain }
        let keychain = try Keychain(paths: current.paths)
        current.keychain = keychain
        return keychain
    }

    /// Apple's status for a daemon error; the daemon's own codes that have no Security
    /// framework counterpart read as what an application would see on Apple platforms.
    static func status(of error: APIError) -> OSStatus {
        if let status = error.osStatus { return status }
        switch error.code {
        case .notInitialized, .keybagDamaged: return errSecNotAvailable
        case .passcodeRequired: return errSecAuthFailed
        case .noPasscodeSet: return errSecParam
        default: return errSecInternalComponent
        }
    }
}
