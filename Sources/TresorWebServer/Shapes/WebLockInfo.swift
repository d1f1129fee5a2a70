import Foundation
import TresorModel

/// How a locked note is locked: which passphrase record opens it.
struct WebLockInfo: Encodable, Sendable {
    var passphraseID: Int64?
    /// `tresor` or `appleNotes`.
    var source: String
    var generation: Int?
    var isCurrent: Bool
    /// Only for a note of an earlier passphrase.
    var hint: String?
    var setOn: Date

    init(_ lock: LockInfo) {
        passphraseID = lock.passphraseID
        source = lock.source == .appleNotes ? "appleNotes" : "tresor"
        generation = lock.generation
        isCurrent = lock.isCurrent
        hint = lock.isCurrent ? nil : lock.hint
        setOn = lock.setOn
    }
}
