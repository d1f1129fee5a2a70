/// Why a sync value could not be made, read or accepted. Every case names what was wrong and
/// which device, record or list it was; none carries a key, a secret or a record's plaintext.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Bytes that are not the value they claim to be (truncated, oversized, unknown layout).
    case malformed(String)
    /// A value written by a later format than this code reads.
    case unsupportedFormat(what: String, version: UInt8)
    /// A trusted-device list, key share or record made for another sync account.
    case otherAccount(expected: String, found: String)
    /// A trusted-device list whose version is not above the one held: a rollback or a replay.
    case listRollback(heldVersion: UInt64, offeredVersion: UInt64)
    /// A trusted-device list signed by someone the held list does not trust.
    case listSignerNotTrusted(signerID: String)
    /// A signature that does not verify with the key of the device it names.
    case badSignature(signerID: String)
    /// A trusted-device list that breaks a rule of its own (duplicate members, no member, epoch going back…).
    case invalidList(String)
    /// Lists that do not start the circle the user compared fingerprint words for.
    case otherCircle(expected: String, found: String)
    /// A list that does not name this device: it is not (or no longer) part of the circle.
    case notAMember(deviceID: String)
    /// A circle-key share made for another device.
    case shareForAnotherDevice(recipientID: String)
    /// A circle-key share whose sender is not a member of the held list.
    case shareSenderNotTrusted(senderID: String)
    /// A circle-key share for an epoch the held list has not reached.
    case shareForFutureEpoch(epoch: UInt64, listEpoch: UInt64)
    /// A circle-key share that does not open with this device's key-agreement key.
    case shareNotOpened
    /// No circle key of this epoch is held.
    case unknownEpoch(UInt64)
    /// A record this device would write is refused before sealing (too large, bad id…).
    case cannotSeal(String)
    /// A page from the server with a refused record: nothing of the page applies.
    case pageRefused(counter: UInt64, recordID: String, reason: RecordRefusal)
    /// A recovery key that is not one (wrong length, a character outside its alphabet, checksum).
    case invalidRecoveryKey(String)
    /// This device's own sync secrets (its identity, its circle keys) cannot be sealed, read or opened.
    case deviceSecrets(String)
    /// This device's own sync secrets wait for the keybag's first unlock since the daemon started.
    case lockedSinceStart

    public var description: String {
        switch self {
        case .malformed(let what): return "malformed sync data: \(what)"
        case .unsupportedFormat(let what, let version): return "\(what) of format version \(version), which this Tresor does not read"
        case .otherAccount(let expected, let found): return "made for sync account \"\(found)\", not \"\(expected)\""
        case .listRollback(let held, let offered):
            return "trusted-device list version \(offered) refused: version \(held) is held, and a list never goes back"
        case .listSignerNotTrusted(let signer): return "trusted-device list refused: its signer \(signer) is not a trusted device"
        case .badSignature(let signer): return "the signature of \(signer) does not verify"
        case .invalidList(let why): return "trusted-device list refused: \(why)"
        case .otherCircle(let expected, let found): return "the lists start circle \(found), not \(expected)"
        case .notAMember(let device): return "device \(device) is not in the trusted-device list"
        case .shareForAnotherDevice(let recipient): return "circle-key share refused: it is for device \(recipient)"
        case .shareSenderNotTrusted(let sender): return "circle-key share refused: its sender \(sender) is not a trusted device"
        case .shareForFutureEpoch(let epoch, let listEpoch):
            return "circle-key share refused: epoch \(epoch) is past the trusted-device list's epoch \(listEpoch)"
        case .shareNotOpened: return "circle-key share refused: it does not open with this device's key"
        case .unknownEpoch(let epoch): return "no circle key of epoch \(epoch) is held"
        case .cannotSeal(let why): return "record not sealed: \(why)"
        case .pageRefused(let counter, let recordID, let reason):
            return "sync page refused, nothing of it applied: record \(recordID) at counter \(counter): \(reason)"
        case .invalidRecoveryKey(let why): return "not a recovery key: \(why)"
        case .deviceSecrets(let why): return "this device's sync secrets: \(why)"
        case .lockedSinceStart:
            return "this device's sync secrets open once the keybag has been unlocked since the daemon started: `tresor unlock`"
        }
    }
}

/// Why one record of a page was refused (``SyncError/pageRefused(counter:recordID:reason:)``).
public enum RecordRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The writing device is not in the trusted-device list and never was.
    case unknownDevice(deviceID: String)
    /// A removed device's record numbered after the last one accepted from it.
    case writtenAfterRemoval(deviceID: String, sequence: UInt64, lastAccepted: UInt64)
    /// The signature does not verify with the writing device's key.
    case badSignature(deviceID: String)
    /// The server's fields (outside the signature) differ from the signed ones: a record moved or swapped.
    case outerFieldDiffers(field: String)
    /// This device's record of this number was already applied: a replay.
    case replayed(deviceID: String, sequence: UInt64)
    /// A record of this device is missing before this one, or came out of order.
    case sequenceGap(deviceID: String, expected: UInt64, found: UInt64)
    /// The server's counters do not increase along the page, or go back before the last page.
    case counterOutOfOrder(previous: UInt64, found: UInt64)
    /// Sealed under an epoch whose key is not held, or past the list's epoch.
    case unknownEpoch(UInt64)
    /// Made for another sync account.
    case otherAccount(String)
    /// The ciphertext does not open under its key and associated data.
    case notOpened
    /// The plaintext's padding or length field is not what a sealing device writes.
    case badPadding
    /// The body cannot be read.
    case malformed(String)

    public var description: String {
        switch self {
        case .unknownDevice(let device): return "written by \(device), which is not a trusted device"
        case .writtenAfterRemoval(let device, let sequence, let last):
            return "written by removed device \(device) after its removal (sequence \(sequence), last accepted \(last))"
        case .badSignature(let device): return "its signature does not verify with the key of \(device)"
        case .outerFieldDiffers(let field): return "the server's \(field) differs from the signed one"
        case .replayed(let device, let sequence): return "sequence \(sequence) of \(device) was already applied (a replay)"
        case .sequenceGap(let device, let expected, let found):
            return "sequence \(found) of \(device) where \(expected) was due: a record is missing or out of order"
        case .counterOutOfOrder(let previous, let found): return "counter \(found) after \(previous): the server's order goes back"
        case .unknownEpoch(let epoch): return "sealed under epoch \(epoch), whose key is not held"
        case .otherAccount(let account): return "made for sync account \"\(account)\""
        case .notOpened: return "its ciphertext does not open (altered, or sealed under another key)"
        case .badPadding: return "its padding is not what a sealing device writes"
        case .malformed(let why): return "malformed: \(why)"
        }
    }
}
