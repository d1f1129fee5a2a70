import Foundation
import TresorDBus
import TresorSecretService
import TresorSystem

/// `tresor doctor`'s word on the Secret Service: whether Tresor answers it, or which other
/// program does (gnome-keyring, KeePassXC hand every secret to every process of the user).
/// A check of the daemon's own, run beside the environment checks.
enum SecretServiceCheck {
    static let id = "secretService"

    /// - Parameters:
    ///   - answering: whether this daemon's provider holds the name.
    ///   - sessionBus: the session bus's address: the one the provider answers on, else the
    ///     daemon's environment's; nil when there is none.
    static func run(answering: Bool, sessionBus: String?) -> EnvironmentFinding {
        let interpreters = "Interpreters are one program to Tresor: every Python script shares python3's items, every shell script bash's."
        if answering {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "Tresor answers the Secret Service (org.freedesktop.secrets)",
                reason: "Each executable sees only the items it created or was allowed (`tresor secret-service`). \(interpreters)")
        }
        guard let address = sessionBus, let bus = try? DBusConnection(address: address) else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "no session bus: no Secret Service provider to look at",
                reason: "Start tresord with --secret-service in a desktop session to serve secret-tool, git, Python keyring and browsers.")
        }
        guard case .uint32(let pid)? = try? bus.callBus("GetConnectionUnixProcessID", [.string(SecretServiceProvider.busName)]).first else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "nobody answers the Secret Service on the session bus",
                reason:
                    "Start tresord with --secret-service (or \"secretService\": true in config.json) so desktop programs keep their secrets in Tresor."
            )
        }
        let name =
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "another program"
        return EnvironmentFinding(
            check: id, severity: .warning, summary: "\(name) (pid \(pid)) answers the Secret Service, not Tresor",
            reason:
                "Every process of yours can read every secret it keeps. Copy them with `tresor import secret-service`, stop it, and start tresord with --secret-service."
        )
    }
}
