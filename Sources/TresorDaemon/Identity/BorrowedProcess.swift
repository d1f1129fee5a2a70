import Foundation
import TresorKeychain

/// Refuses a process that another program controls, for every way a client reaches the daemon
/// (the socket API and the Secret Service): one being traced (`TracerPid`, kept by the kernel),
/// or one started with a loader variable (its initial environment). Neither proves the process
/// is clean — code can be injected in other ways by a process of the same user
/// (docs/SECURITY.md §4.24) — but both are the ordinary ways of borrowing a program's identity.
struct BorrowedProcess: Sendable {
    /// The loader variables that put another program's code into a process: a process started
    /// with one of them is not the executable it names (docs/SECRET-SERVICE.md).
    static let loaderVariables = ["LD_PRELOAD", "LD_AUDIT"]

    let procRoot: String

    /// - Throws: `KeychainError.missingEntitlement` naming the reason.
    func refuse(_ pid: Int32) throws {
        if let reason = reason(pid) { throw KeychainError.missingEntitlement(reason) }
    }

    /// Why process `pid` is not itself, or nil when neither check finds anything.
    ///
    /// Read as bytes: every new Secret Service client passes here, and Foundation's reading and
    /// `String`'s line splitting were a fifth of the provider's work for one `secret-tool lookup`.
    func reason(_ pid: Int32) -> String? {
        let status = Self.contents("\(procRoot)/\(pid)/status")
        if let tracer = Self.field(Self.tracerField, in: status), !tracer.elementsEqual([UInt8(ascii: "0")]) {
            return "the calling process is being traced"
        }
        let environment = Self.contents("\(procRoot)/\(pid)/environ")
        for entry in environment.split(separator: 0) {
            for (name, prefix) in Self.loaderPrefixes where entry.starts(with: prefix) {
                return "the calling process was started with \(name)"
            }
        }
        return nil
    }

    private static let tracerField = Array("TracerPid:".utf8)
    /// Each loader variable with the `=` that ends its name in an environment entry.
    private static let loaderPrefixes = loaderVariables.map { ($0, Array("\($0)=".utf8)) }

    /// A file of /proc whole, up to 64 MiB (empty when it cannot be read: the process is gone, or
    /// never was). Read with `read(2)` alone: no URL, no `Data`.
    private static func contents(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 64 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return bytes
    }

    /// The value of the `name` line of /proc's `status`, without the blanks around it.
    private static func field(_ name: [UInt8], in status: [UInt8]) -> ArraySlice<UInt8>? {
        guard let line = status.split(separator: UInt8(ascii: "\n")).first(where: { $0.starts(with: name) }) else { return nil }
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let value = line.dropFirst(name.count).drop(while: blank)
        return value[..<(value.lastIndex(where: { !blank($0) }).map { $0 + 1 } ?? value.startIndex)]
    }
}
