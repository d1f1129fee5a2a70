import Foundation
import Logging
import PostgresNIO
import Synchronization
import TresorNotesDomain
import TresorWebStore

/// A server's live updates between instances (docs/WEB.md, "Live updates"): an event is
/// published with `NOTIFY` on one channel and every instance — the publishing one too — hears
/// it on a connection of its own that `LISTEN`s, and tells its own pages. When that connection
/// is lost, events may have been missed: once it listens again the bus tells its pages
/// ``WebEvent/resync``, and they read what they show again.
final class PostgresEventBus: WebEventBus {
    /// The channel every instance listens on.
    static let channel = "tresor_events"

    private let db: ServerDatabase
    private let listeners = Mutex<[UUID: @Sendable (WebEvent) -> Void]>([:])

    init(db: ServerDatabase) {
        self.db = db
    }

    func publish(_ event: WebEvent) async throws {
        let payload = String(decoding: try JSONEncoder().encode(EventPayload(event)), as: UTF8.self)
        try await db.read { [logger = db.logger] connection in
            try await connection.run("SELECT pg_notify(\(Self.channel), \(payload))", logger)
        }
    }

    func listen(_ listener: @escaping @Sendable (WebEvent) -> Void) -> UUID {
        let id = UUID()
        listeners.withLock { $0[id] = listener }
        return id
    }

    func stopListening(_ token: UUID) {
        listeners.withLock { $0[token] = nil }
    }

    /// Listens until cancelled, connecting again (after `retryDelay`) whenever the listening
    /// connection is lost, and saying ``WebEvent/resync`` each time it listens again.
    /// - Parameters:
    ///   - retryDelay: the pause before connecting again.
    ///   - listening: called each time the connection listens (tests wait for it).
    func run(retryDelay: Duration = .milliseconds(500), listening: @escaping @Sendable () -> Void = {}) async {
        var listenedBefore = false
        while !Task.isCancelled {
            do {
                try await db.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        if listenedBefore { self.deliver(.resync) }
                        listenedBefore = true
                        listening()
                        for try await notification in notifications {
                            guard let data = notification.payload.data(using: .utf8),
                                let payload = try? JSONDecoder().decode(EventPayload.self, from: data), let event = payload.event
                            else {
                                db.logger.warning("an event of the events channel did not read; ignored")
                                continue
                            }
                            self.deliver(event)
                        }
                    }
                }
            } catch {
                guard !Task.isCancelled else { return }
                db.logger.warning(
                    "the connection listening for events was lost; listening again", metadata: ["error": "\(ServerDatabase.translated(error))"])
            }
            try? await Task.sleep(for: retryDelay)
        }
    }

    private func deliver(_ event: WebEvent) {
        for listener in listeners.withLock({ Array($0.values) }) { listener(event) }
    }
}

/// A ``WebEvent`` as the events channel carries it (JSON; ids, kinds and revisions only; a sync
/// event's counter rides as its revision; `device`, the sync device whose request made it).
struct EventPayload: Codable, Equatable {
    var type: String
    var kind: NoteChange.Kind?
    var noteID: String?
    var revision: Int64?
    var accounts: [String]?
    var reason: String?
    var device: String?

    init(_ event: WebEvent) {
        switch event {
        case .note(let change):
            type = "note"
            kind = change.kind
            noteID = change.noteID
            revision = change.revision
            accounts = change.accounts.map(\.rawValue).sorted()
            device = change.device
        case .secureSessionEnded(let account, let reason):
            type = "secureSessionEnded"
            accounts = [account.rawValue]
            self.reason = reason
        case .resync:
            type = "resync"
        case .syncRecords(let account, let counter, let device):
            type = "syncRecords"
            accounts = [account.rawValue]
            revision = counter
            self.device = device
        case .syncCircle(let account, let device):
            type = "syncCircle"
            accounts = [account.rawValue]
            self.device = device
        case .notesPassphrase(let account, let device):
            type = "notesPassphrase"
            accounts = [account.rawValue]
            self.device = device
        }
    }

    /// The event, or nil for one this version does not know.
    var event: WebEvent? {
        switch type {
        case "note":
            guard let kind else { return nil }
            return .note(
                NoteChange(
                    kind: kind, noteID: noteID, revision: revision, accounts: Set((accounts ?? []).map(AccountID.init(rawValue:))), device: device))
        case "secureSessionEnded":
            guard let account = accounts?.first else { return nil }
            return .secureSessionEnded(account: AccountID(rawValue: account), reason: reason ?? "")
        case "resync": return .resync
        case "syncRecords":
            guard let account = accounts?.first, let revision else { return nil }
            return .syncRecords(account: AccountID(rawValue: account), counter: revision, device: device)
        case "syncCircle":
            guard let account = accounts?.first else { return nil }
            return .syncCircle(account: AccountID(rawValue: account), device: device)
        case "notesPassphrase":
            guard let account = accounts?.first else { return nil }
            return .notesPassphrase(account: AccountID(rawValue: account), device: device)
        default: return nil
        }
    }
}
