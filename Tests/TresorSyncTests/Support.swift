import Foundation
import TresorKeybag
import TresorSyncProtocol
import TresorSystem
import TresorTestSupport

@testable import TresorSync

extension TemporaryHome {
    convenience init() { self.init(prefix: "tresor-sync") }
}

/// Cheap KDF for tests; production uses ``KeybagSettings/production``.
let testKeybagSettings = KeybagSettings.insecureForTesting(kdfRounds: 1_000)

/// A circle of three devices (laptop, desktop, phone) on one account, as its devices would
/// hold it after the laptop created it and approved the two others: each device's list, and
/// the epoch-1 key every one opened from its share.
struct TestCircle {
    static let account = "alice@example.com"
    let laptop: LocalDevice
    let desktop: LocalDevice
    let phone: LocalDevice
    let recoveryKey: RecoveryKey
    /// The list every device holds: version 3, the three devices, epoch 1.
    let list: TrustedDeviceList
    /// The signed lists in the order they were made (version 1, 2, 3).
    let history: [SignedTrustedDeviceList]
    let epochOne: CircleKey

    init() throws {
        laptop = try LocalDevice.create(name: "laptop")
        desktop = try LocalDevice.create(name: "desktop")
        phone = try LocalDevice.create(name: "phone")
        recoveryKey = RecoveryKey.generate()
        let first = try TrustedDeviceList.create(account: Self.account, device: laptop, recoveryKey: recoveryKey)
        let second = try first.list.adding(desktop.identity).signed(by: laptop)
        let third = try second.list.adding(phone.identity).signed(by: desktop)
        history = [first, second, third]
        list = try first.list.accepting(second).accepting(third)
        epochOne = CircleKey.generate(epoch: 1)
    }

    /// The key `device` opens from the share `sender` made it.
    func keyring(for device: LocalDevice, from sender: LocalDevice, _ keys: [CircleKey], list: TrustedDeviceList? = nil) throws -> CircleKeyring {
        let list = list ?? self.list
        return CircleKeyring(try keys.map { try $0.share(to: device.identity, account: Self.account, from: sender).open(as: device, trusting: list) })
    }

    func seal(
        _ text: String, by device: LocalDevice, sequence: UInt64, recordID: String = UUID().uuidString, baseCounter: UInt64 = 0,
        key: CircleKey? = nil, tombstone: Bool = false
    ) throws -> SyncUpload {
        try SealedRecord.seal(
            RecordContent(payload: Data(text.utf8), isTombstone: tombstone), recordID: recordID, deviceSequence: sequence,
            baseCounter: baseCounter, account: Self.account, key: key ?? epochOne, device: device)
    }
}

/// Numbers uploads with the server's counters, from `start`.
func page(_ uploads: [SyncUpload], from start: UInt64 = 1) -> [SyncRecord] {
    uploads.enumerated().map { SyncRecord(counter: start + UInt64($0.offset), upload: $0.element) }
}

/// Why `page` was refused, applied after `progress`, or nil when it was accepted.
func refusal(
    of page: [SyncRecord], after progress: SyncProgress = SyncProgress(), list: TrustedDeviceList, keys: CircleKeyring
) -> RecordRefusal? {
    refusal { _ = try progress.applying(page, list: list, keys: keys) }
}

/// The refusal a page was refused for, or nil when it was accepted.
func refusal(_ body: () throws -> Void) -> RecordRefusal? {
    do {
        try body()
        return nil
    } catch SyncError.pageRefused(_, _, let reason) {
        return reason
    } catch {
        return .malformed("unexpected error: \(error)")
    }
}

extension Data {
    init(hex: String) {
        self.init(
            stride(from: 0, to: hex.count, by: 2).map {
                UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)!
            })
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
