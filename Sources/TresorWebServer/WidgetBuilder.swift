import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol
import TresorWebStore

/// Builds the widget (docs/WEB.md, "Shapes") for the browser and the CLI alike. Counts and
/// dates are not private; titles are, and appear only while the content is readable **and** a
/// secure session is open — for the CLI (`browser` nil) the store's; for a browser its own, as
/// it said so recently: the CLI's open session, or another browser's, shows nothing in this one.
/// The data-protection level may hide the whole widget (``WidgetProtection``). On a server the
/// content's key is the server key, always there: only the secure session redacts.
package struct WidgetBuilder: Sendable {
    let store: any WebStore
    /// The home keybag that seals the store's content; nil for a server's store.
    let home: (any LocalKeybag)?
    let sessions: any WebSessionStore
    let protection: WidgetProtection

    package init(store: any WebStore, home: (any LocalKeybag)?, sessions: any WebSessionStore, protection: WidgetProtection) {
        self.store = store
        self.home = home
        self.sessions = sessions
        self.protection = protection
    }

    /// The widget of `account`, as `browser` (nil: the CLI) may see it.
    package func widget(for account: AccountID, browser: WebSession? = nil) async throws -> Widget {
        let lockState = home?.state ?? .unlocked
        let keybag: KeybagState
        switch lockState {
        case .notInitialized: return placeholder(.notInitialized, keybag: .notInitialized)
        case .damaged: return placeholder(.contentUnavailable, keybag: .damaged)
        case .lockedSinceStart: keybag = .lockedSinceStart
        case .locked: keybag = .locked
        case .unlocked: keybag = .unlocked
        }
        switch (protection, lockState) {
        case (.complete, .lockedSinceStart), (.complete, .locked), (.completeUnlessOpen, .lockedSinceStart):
            return placeholder(.protectionLevel, keybag: keybag)
        default: break
        }
        let secureSession: Bool
        if let browser {
            secureSession = try await sessions.secureSessionOpen(of: browser, now: Date())
        } else {
            secureSession = try await store.passphraseStatus(account: account).sessionOpen
        }
        let redacted = lockState != .unlocked || !secureSession
        guard lockState != .lockedSinceStart else {
            // Titles cannot even be read yet; counts can.
            let counts = try await store.widgetCounts(account: account)
            return Widget(
                placeholder: false, noteCount: counts.notes, redacted: true, keybag: keybag, secureSession: secureSession, protection: protection)
        }
        let summary = try await store.widget(account: account)
        return Widget(
            placeholder: false, noteCount: summary.noteCount,
            recent: summary.recent.map {
                .init(id: $0.id, title: redacted ? nil : $0.title, modified: $0.modified, isLocked: $0.isLocked, redacted: redacted)
            },
            pinned: summary.pinned.map { .init(id: $0.id, title: redacted ? nil : $0.title, isLocked: $0.isLocked, redacted: redacted) },
            redacted: redacted, keybag: keybag, secureSession: secureSession, protection: protection)
    }

    private func placeholder(_ reason: Widget.PlaceholderReason, keybag: KeybagState) -> Widget {
        Widget(placeholder: true, reason: reason, redacted: true, keybag: keybag, secureSession: false, protection: protection)
    }
}
