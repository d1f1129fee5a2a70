import Foundation
import Hummingbird
import TresorKeybag
import TresorNotes
import TresorProtocol

/// Builds the widget (SPEC §5) for the browser and the CLI alike. Counts and dates are not
/// private; titles are, and appear only while the keybag is unlocked **and** a secure session
/// is open — for the CLI (`browser` nil) the store's; for a browser its own, as it said so
/// recently: the CLI's open session, or another browser's, shows nothing in this one
/// (docs/WEB.md, "Widget").
/// The data-protection level may hide the whole widget (``WidgetProtection``).
struct WidgetBuilder: Sendable {
    let slot: KeybagSlot
    let notes: NotesProvider
    let sessions: WebSessions
    let protection: WidgetProtection

    func widget(for account: AccountID, browser: WebSession? = nil) throws -> Widget {
        let lockState: LockState
        switch slot.current {
        case .notInitialized: return placeholder(.notInitialized, keybag: .notInitialized)
        case .damaged: return placeholder(.contentUnavailable, keybag: .damaged)
        case .ready(let keybag): lockState = keybag.lockState
        }
        let keybag = Self.state(lockState)
        switch (protection, lockState) {
        case (.complete, .lockedSinceStart), (.complete, .locked), (.completeUnlessOpen, .lockedSinceStart):
            return placeholder(.protectionLevel, keybag: keybag)
        default: break
        }
        let store = try notes.store()
        let secureSession = try browser.map { sessions.secureSessionOpen(of: $0) } ?? store.passphraseStatus(account: account).sessionOpen
        let redacted = lockState != .unlocked || !secureSession
        guard lockState != .lockedSinceStart else {
            // Titles cannot even be read yet; counts can.
            let counts = try store.widgetCounts(account: account)
            return Widget(placeholder: false, noteCount: counts.notes, redacted: true, keybag: keybag, secureSession: secureSession, protection: protection)
        }
        let summary = try store.widget(account: account)
        return Widget(
            placeholder: false, noteCount: summary.noteCount,
            recent: summary.recent.map { .init(title: redacted ? nil : $0.title, modified: $0.modified, isLocked: $0.isLocked, redacted: redacted) },
            pinned: summary.pinned.map { .init(title: redacted ? nil : $0.title, isLocked: $0.isLocked, redacted: redacted) },
            redacted: redacted, keybag: keybag, secureSession: secureSession, protection: protection)
    }

    private func placeholder(_ reason: Widget.PlaceholderReason, keybag: Widget.KeybagState) -> Widget {
        Widget(placeholder: true, reason: reason, redacted: true, keybag: keybag, secureSession: false, protection: protection)
    }

    static func state(_ lockState: LockState) -> Widget.KeybagState {
        switch lockState {
        case .lockedSinceStart: return .lockedSinceStart
        case .locked: return .locked
        case .unlocked: return .unlocked
        }
    }
}

/// `GET /api/widget` and `POST /api/secure-session` (the browser says whether its secure
/// session — its locked-note keys — is open, so the widget may show titles).
struct WebWidgetRoutes {
    let services: WebServices

    struct SecureSessionRequest: Decodable {
        var open: Bool
        /// Why it closed: `lockNow`, `idle` or `hidden` (auto-lock) close the account's other
        /// pages' locked notes too (docs/WEB.md, "Live updates").
        var reason: String?
    }

    /// The reasons a closed secure session is told to the account's other pages.
    static let sharedLockReasons: Set<String> = ["lockNow", "idle", "hidden"]

    func register(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/widget") { _, context -> Response in
            let session = try context.requireSession()
            return try WebCoding.response(try await offloaded { try services.widget.widget(for: session.account.id, browser: session) })
        }
        router.post("/api/secure-session") { request, context -> Response in
            let session = try context.requireSession()
            let body = try await WebCoding.decode(SecureSessionRequest.self, request)
            services.sessions.reportSecureSession(session, open: body.open)
            if !body.open, let reason = body.reason, Self.sharedLockReasons.contains(reason) {
                services.events.secureSessionEnded(for: session.account.id, reason: reason)
            }
            context.logger.info("web: secure session reported", metadata: ["open": "\(body.open)"])
            return Response(status: .noContent)
        }
    }
}
