import FoundationEssentials

// The widget (docs/API.md, "The widget"): a glanceable summary of an account's notes — how many,
// which changed lately, which are pinned — served to the browser (`GET /api/widget`) and to the CLI
// (`GET /v1/widget`, the local account; `tresor widget`). Titles are private: they are replaced by
// placeholders whenever the keybag is not unlocked or no secure session is open.

extension Route {
    /// `GET /v1/widget`: the local account's widget. The `tresor` CLI only.
    public static let widget = "/v1/widget"
}

/// The widget's data-protection level (`"widgetProtection"` in `config.json`), named after
/// Apple's file protection classes.
public enum WidgetProtection: String, Codable, Sendable, CaseIterable {
    /// Only a placeholder unless the keybag is unlocked right now.
    case complete
    /// Only a placeholder until the first unlock after the daemon started; then the
    /// summary, titles redacted as usual.
    case completeUnlessOpen
    /// The summary whenever notes are readable, titles redacted as usual (the default).
    case completeUntilFirstUserAuthentication
}

/// What the widget shows.
public struct Widget: Codable, Equatable, Sendable {
    /// Why a whole-widget placeholder is shown.
    public enum PlaceholderReason: String, Codable, Sendable {
        /// The data-protection level hides everything while the keybag is in this state.
        case protectionLevel
        /// Nothing is readable: the keybag is damaged. (Before the first unlock the widget is no
        /// placeholder: it has the note count, without notes.)
        case contentUnavailable
        /// The home has no keybag yet (`tresor init`).
        case notInitialized
    }

    /// A recently changed note. `title` is absent when `redacted`; `id` opens it (never private).
    public struct RecentNote: Codable, Equatable, Sendable {
        /// The note's id.
        public var id: String
        /// The note's title; nil when `redacted`.
        public var title: String?
        /// When the note last changed (seconds since 1970 on the wire).
        public var modified: Date
        /// Whether the note is locked.
        public var isLocked: Bool
        /// Whether the title is left out.
        public var redacted: Bool

        /// Makes a recent note; the parameters are the properties of the same names.
        public init(id: String, title: String?, modified: Date, isLocked: Bool, redacted: Bool) {
            self.id = id
            self.title = title
            self.modified = modified
            self.isLocked = isLocked
            self.redacted = redacted
        }
    }

    /// A pinned note. `title` is absent when `redacted`; `id` opens it (never private).
    public struct PinnedNote: Codable, Equatable, Sendable {
        /// The note's id.
        public var id: String
        /// The note's title; nil when `redacted`.
        public var title: String?
        /// Whether the note is locked.
        public var isLocked: Bool
        /// Whether the title is left out.
        public var redacted: Bool

        /// Makes a pinned note; the parameters are the properties of the same names.
        public init(id: String, title: String?, isLocked: Bool, redacted: Bool) {
            self.id = id
            self.title = title
            self.isLocked = isLocked
            self.redacted = redacted
        }
    }

    /// True: nothing but this flag, `reason`, `keybag` and `protection` is filled in.
    public var placeholder: Bool
    /// Why the placeholder is shown; nil when `placeholder` is false.
    public var reason: PlaceholderReason?
    /// How many notes the account has (Recently Deleted left out); nil for a placeholder.
    public var noteCount: Int?
    /// The most recently changed notes, newest first (at most five); empty before the first unlock.
    public var recent: [RecentNote]
    /// The most recently changed pinned notes, newest first (at most five); empty before the first unlock.
    public var pinned: [PinnedNote]
    /// True when the private fields (titles) are replaced by placeholders.
    public var redacted: Bool
    /// The login keybag's state.
    public var keybag: KeybagState
    /// Whether a secure session is open for the account (the store's, or a browser's).
    public var secureSession: Bool
    /// The data-protection level in force.
    public var protection: WidgetProtection

    /// Makes a widget; the parameters are the properties of the same names.
    public init(
        placeholder: Bool, reason: PlaceholderReason? = nil, noteCount: Int? = nil, recent: [RecentNote] = [],
        pinned: [PinnedNote] = [], redacted: Bool, keybag: KeybagState, secureSession: Bool, protection: WidgetProtection
    ) {
        self.placeholder = placeholder
        self.reason = reason
        self.noteCount = noteCount
        self.recent = recent
        self.pinned = pinned
        self.redacted = redacted
        self.keybag = keybag
        self.secureSession = secureSession
        self.protection = protection
    }

    /// The placeholder shown instead of a private field, in text views.
    public static let redactedText = "••••"
}
