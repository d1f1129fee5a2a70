import Synchronization

/// The slots taken, per client and all clients together; shared by every connection of a server.
final class ConnectionSlots: Sendable {
    let perClient: Int
    /// What all clients but the owner (and trusted proxies) may hold together.
    let othersTogether: Int

    private struct Taken {
        var others = 0
        var byClient: [String: Int] = [:]
    }

    private let taken = Mutex(Taken())

    init(perClient: Int, othersTogether: Int) {
        self.perClient = perClient
        self.othersTogether = othersTogether
    }

    /// Takes a slot for `holder`.
    /// - Returns: whether there was one: always for the owner and trusted proxies.
    func take(for holder: ConnectionHolder) -> Bool {
        guard case .client(let client) = holder else { return true }
        return taken.withLock { taken in
            let held = taken.byClient[client, default: 0]
            guard held < perClient, taken.others < othersTogether else { return false }
            taken.byClient[client] = held + 1
            taken.others += 1
            return true
        }
    }

    /// Gives back a slot `take(for:)` gave.
    func giveBack(for holder: ConnectionHolder) {
        guard case .client(let client) = holder else { return }
        taken.withLock { taken in
            let held = taken.byClient[client, default: 1] - 1
            taken.byClient[client] = held > 0 ? held : nil
            taken.others -= 1
        }
    }
}
