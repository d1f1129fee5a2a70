import Dispatch
import Synchronization
import TresorCrypto

/// Diffie-Hellman key pairs made ahead of the `OpenSession` that uses them, so a client waits
/// for one modular exponentiation (the agreement), not two.
///
/// One pair is kept ready and a new one is made on a background queue as soon as it is taken;
/// a burst of sessions faster than that gets pairs made on the spot. Each pair still serves one
/// agreement only: it is handed out once and never kept after.
final class SessionKeyPairs: Sendable {
    private let ready = Mutex<DiffieHellman.KeyPair?>(nil)
    private let making = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "tresor.secret-service.key-pairs", qos: .utility)

    init() { refill() }

    /// A fresh key pair no one else has been given.
    func take() -> DiffieHellman.KeyPair {
        let pair = ready.withLock { ready in
            defer { ready = nil }
            return ready
        }
        refill()
        return pair ?? DiffieHellman.KeyPair()
    }

    /// Starts making the next pair, unless one is ready or being made.
    private func refill() {
        guard ready.withLock({ $0 == nil }), making.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        queue.async { [self] in
            let pair = DiffieHellman.KeyPair()
            ready.withLock { $0 = pair }
            making.store(false, ordering: .releasing)
        }
    }
}
