import Foundation
import Hummingbird
import Logging
import TresorNotesDomain
import TresorSyncProtocol
import TresorWebStore
import TresorWebStorePostgres

/// What a router's request context must tell the sync routes: the client's address (behind a
/// trusted proxy, the one it names), for the sign-in limits of enrollment.
public protocol SyncRequestContext: RequestContext {
    var clientAddress: String { get }
}

/// A server's sync relay (docs/SYNC.md, "Transport"): the routes under `/v1/sync`, on the
/// server's database and event bus. Devices enroll with their web account's password, then
/// sign in with their Ed25519 credential; trusted devices push and pull sealed records, keep
/// the signed device list and the wrapped circle keys, answer join requests and remove
/// devices. The relay opens nothing it stores.
public final class SyncRelay: Sendable {
    let store: SyncStore
    let accounts: any WebStore
    let invites: any WebInviteStore
    /// Whether registering an account needs the owner's invite (the web's `webRegistration`).
    let registrationNeedsInvite: Bool
    /// The bytes each web account may store (the web's `webAccountQuotaBytes`): a device's
    /// note writes and the attachments it sends count against it as a browser's do
    /// (docs/SYNC.md, "Notes", "Attachments"). Nil: no limit.
    let accountQuotaBytes: Int64?
    /// The largest attachment a device may send (`notesAttachmentBytes`, by default
    /// `NoteLimits.attachmentBytes`).
    let attachmentBytes: Int
    let throttle: LoginThrottle
    let events: any WebEventBus
    let live = SyncLiveUpdates()
    private let listener: UUID

    /// - Parameters:
    ///   - database: the server's database (``PostgresWebStorage/database``), migrated.
    ///   - backend: the server's web backend: its accounts, sign-in counters and event bus.
    ///   - registrationNeedsInvite: whether `POST /v1/sync/accounts` needs the owner's invite,
    ///     as the web's registration does (`webRegistration`: `invite`, the default).
    ///   - accountQuotaBytes: the bytes each web account may store (`webAccountQuotaBytes`) —
    ///     a device's note writes and the attachments it sends count against it as a browser's
    ///     do — or nil for no limit.
    ///   - attachmentBytes: the largest attachment a device may send (`notesAttachmentBytes`).
    ///   - clock: the time challenges, sessions and join requests are dated by.
    ///   - beforeCommit: runs in each push's transaction before it commits (tests hold one open).
    public init(
        database: ServerDatabase, backend: WebBackend, registrationNeedsInvite: Bool = true, accountQuotaBytes: Int64? = nil,
        attachmentBytes: Int = NoteLimits.attachmentBytes, clock: @escaping @Sendable () -> Date = { Date() },
        beforeCommit: @escaping @Sendable () async -> Void = {}
    ) {
        store = SyncStore(db: database, clock: clock, beforeCommit: beforeCommit)
        accounts = backend.store
        invites = backend.invites
        self.registrationNeedsInvite = registrationNeedsInvite
        self.accountQuotaBytes = accountQuotaBytes
        self.attachmentBytes = attachmentBytes
        throttle = LoginThrottle(store: backend.throttles)
        events = backend.events
        let live = self.live
        listener = backend.events.listen { live.deliver($0) }
    }

    deinit {
        events.stopListening(listener)
    }

    /// Keeps the devices' streams open until cancelled: a keep-alive line every 15 s.
    public func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(15))
            live.keepAlive()
        }
    }

    /// Registers the routes under `/v1/sync` (docs/openapi.yaml, "sync").
    /// - Parameter router: the web server's router.
    public func register<Context: SyncRequestContext>(on router: Router<Context>) {
        SyncRoutes(relay: self).register(on: router)
    }
}
