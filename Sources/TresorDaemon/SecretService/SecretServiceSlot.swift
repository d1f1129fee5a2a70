import Synchronization
import TresorProtocol
import TresorSecretService

/// The Secret Service provider the daemon runs, once it runs one, the session bus it answers on,
/// and the desktop's prompter there.
///
/// A daemon answers on one session bus: the one its environment names when it starts, or —
/// started before the desktop session had a bus (at login, by the PAM module) — the one a
/// `tresord --secret-service` of that session hands it later (`POST /v1/secret-service/bus`).
final class SecretServiceSlot: Sendable {
    private struct Serving {
        var address: String
        var provider: SecretServiceProvider
        var desktop: DesktopUnlock
    }

    private let serving = Mutex<Serving?>(nil)

    /// Answers on the bus at `address` with the provider `start` makes, unless a provider answers
    /// already.
    /// - Parameters:
    ///   - address: the session bus.
    ///   - start: starts a provider on `address`, with the desktop's prompter on that bus; throws
    ///     why it cannot (another provider owns the name, the bus cannot be reached).
    /// - Returns: whether a provider was started; false, one answered on `address` already.
    /// - Throws: `APIError` `conflict`: one answers on another bus, or `start`'s reason.
    @discardableResult
    func answer(on address: String, start: (String) throws -> (SecretServiceProvider, DesktopUnlock)) throws -> Bool {
        try serving.withLock { serving in
            if let current = serving {
                guard current.address == address else {
                    throw APIError(
                        .conflict,
                        "this tresord answers the Secret Service on another session bus (\(current.address)); run `tresor daemon restart` in the session whose bus it should answer on"
                    )
                }
                return false
            }
            do {
                let (provider, desktop) = try start(address)
                serving = Serving(address: address, provider: provider, desktop: desktop)
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError(.conflict, "the Secret Service could not start on that bus: \(error)")
            }
            return true
        }
    }

    /// Forgets `provider` once it stopped answering (its bus went away at the end of its desktop
    /// session), so that the next session's bus can be handed over; a newer provider stays.
    /// - Parameter provider: the provider that ended.
    /// - Returns: whether it was the one serving.
    @discardableResult
    func ended(_ provider: SecretServiceProvider) -> Bool {
        serving.withLock { serving in
            guard let current = serving, current.provider === provider else { return false }
            serving = nil
            return true
        }
    }

    /// Whether a provider answers.
    var isAnswering: Bool { serving.withLock { $0 != nil } }

    /// The bus the provider answers on, if one does.
    var address: String? { serving.withLock { $0?.address } }

    /// The desktop's prompter on that bus, if a provider answers: where the user is asked.
    var desktop: DesktopUnlock? { serving.withLock { $0?.desktop } }

    /// Tells the provider, if one runs, that a keybag was unlocked or locked.
    func keybagChanged() { serving.withLock { $0?.provider }?.keybagChanged() }

    /// Stops the provider, if one runs.
    func stop() { serving.withLock { $0?.provider }?.stop() }
}
