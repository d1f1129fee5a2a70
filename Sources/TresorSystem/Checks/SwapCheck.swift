import FoundationEssentials
import Glibc

/// Memory paged out to an unencrypted swap device stays on disk after the keychain locks,
/// possibly for a long time, and is readable from the raw disk.
enum SwapCheck {
    static let id = "swap"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        // No /proc/swaps means a kernel without swap support: no swap at all.
        guard let text = EnvironmentProbe.readText(context.procRoot.appendingPathComponent("swaps")) else {
            return noSwap
        }
        // Format: a header line, then "Filename Type Size Used Priority" per active area.
        let entries = text.split(separator: "\n").dropFirst().compactMap { line -> (String, String)? in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { return nil }
            return (unescape(String(fields[0])), String(fields[1]))
        }
        guard !entries.isEmpty else { return noSwap }

        var fine: [String] = []
        var unencrypted: [String] = []
        for (name, type) in entries {
            if let why = protection(of: name, type: type, sysRoot: context.sysRoot) {
                fine.append("\(name) (\(why))")
            } else {
                unencrypted.append(name)
            }
        }
        if !unencrypted.isEmpty {
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "unencrypted swap: secrets paged out may reach disk: " + EnvironmentProbe.list(unencrypted),
                reason: "Memory holding unlocked keys or secrets can be written to these areas and stay there. "
                    + "Use encrypted swap (dm-crypt, e.g. a random key in /etc/crypttab), zram, or no swap.")
        }
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "swap is protected: " + EnvironmentProbe.list(fine),
            reason: "Memory paged out stays in RAM (zram) or is encrypted before it reaches disk.")
    }

    private static let noSwap = EnvironmentFinding(
        check: id, severity: .ok, summary: "no active swap",
        reason: "Memory is never paged out to disk.")

    /// Why a swap area is safe, or `nil` if it may be plain disk.
    private static func protection(of name: String, type: String, sysRoot: URL) -> String? {
        if type == "file" {
            // A swap file is as safe as the block device its file system lives on.
            guard let dm = deviceOfFile(name, sysRoot: sysRoot) else { return nil }
            return isZram(dm) ? "on zram" : (isEncrypted(dm, sysRoot: sysRoot) ? "on encrypted \(dm)" : nil)
        }
        guard let device = blockDevice(for: name, sysRoot: sysRoot) else { return nil }
        if isZram(device) { return "zram, in memory" }
        return isEncrypted(device, sysRoot: sysRoot) ? "encrypted" : nil
    }

    private static func isZram(_ device: String) -> Bool { device.hasPrefix("zram") }

    /// The kernel name (`zram0`, `dm-0`, `sda2`) of a swap device path.
    private static func blockDevice(for name: String, sysRoot: URL) -> String? {
        let base = URL(fileURLWithPath: name).lastPathComponent
        if name.hasPrefix("/dev/mapper/") {
            // Mapper names are links to /dev/dm-N; sysfs knows each dm device's name too.
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: name) {
                return URL(fileURLWithPath: target).lastPathComponent
            }
            let block = sysRoot.appendingPathComponent("block")
            let devices = (try? FileManager.default.contentsOfDirectory(atPath: block.path)) ?? []
            return devices.sorted().first { dm in
                dm.hasPrefix("dm-") && EnvironmentProbe.readLine(block.appendingPathComponent("\(dm)/dm/name")) == base
            }
        }
        return base
    }

    /// Whether a device-mapper device encrypts: itself a dm-crypt target ("CRYPT-…" uuid), or a
    /// mapping (e.g. LVM) whose every underlying device is encrypted.
    private static func isEncrypted(_ device: String, sysRoot: URL, depth: Int = 0) -> Bool {
        guard device.hasPrefix("dm-"), depth < 8 else { return false }
        let dir = sysRoot.appendingPathComponent("block/\(device)")
        if EnvironmentProbe.readLine(dir.appendingPathComponent("dm/uuid"))?.hasPrefix("CRYPT-") == true {
            return true
        }
        let slaves = (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("slaves").path)) ?? []
        return !slaves.isEmpty && slaves.allSatisfy { isEncrypted($0, sysRoot: sysRoot, depth: depth + 1) }
    }

    /// The kernel name of the block device holding a file, via /sys/dev/block/MAJOR:MINOR.
    private static func deviceOfFile(_ path: String, sysRoot: URL) -> String? {
        guard let status = EnvironmentProbe.status(path) else { return nil }
        // glibc's dev_t encoding (gnu_dev_major/minor are macros Swift cannot import).
        let dev = status.device
        let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
        let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
        let link = sysRoot.appendingPathComponent("dev/block/\(major):\(minor)")
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link.path) else { return nil }
        return URL(fileURLWithPath: target).lastPathComponent
    }

    /// /proc/swaps writes spaces and other special characters in names as octal escapes (`\040`).
    private static func unescape(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        var chars = Array(field.utf8)[...]
        while let c = chars.popFirst() {
            if c == UInt8(ascii: "\\"), chars.count >= 3,
                let value = UInt8(String(decoding: chars.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                chars = chars.dropFirst(3)
            } else {
                bytes.append(c)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
