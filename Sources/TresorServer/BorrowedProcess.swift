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
    func reason(_ pid: Int32) -> String? {
        let status = (try? String(contentsOfFile: "\(procRoot)/\(pid)/status", encoding: .utf8)) ?? ""
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") }),
            line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces) != "0" {
            return "the calling process is being traced"
        }
        let environment = (try? Data(contentsOf: URL(fileURLWithPath: "\(procRoot)/\(pid)/environ"))) ?? Data()
        for entry in environment.split(separator: 0) {
            let name = String(decoding: entry.prefix(while: { $0 != UInt8(ascii: "=") }), as: UTF8.self)
            if Self.loaderVariables.contains(name) { return "the calling process was started with \(name)" }
        }
        return nil
    }
}
