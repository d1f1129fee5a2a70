import FoundationEssentials
import Glibc

/// A keybag linked to the login password (`tresor passcode link-login`) is unlocked at login
/// only by the PAM module `pam_tresor`: a link with the module in no PAM service unlocks nothing.
enum LoginModuleCheck {
    static let id = "login-module"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        let link = TresorPaths(home: context.home.path, environment: context.environment).loginLink
        guard EnvironmentProbe.status(link.path) != nil else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "the keybag is not linked to the login password",
                reason: "Only a linked keybag (tresor passcode link-login) is unlocked at login, by the PAM module pam_tresor.")
        }
        let services = servicesNamingTheModule(in: context.pamFolder)
        guard services.isEmpty else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "pam_tresor is in \(services.joined(separator: ", "))",
                reason: "Logging in through those PAM services hands the login password to the daemon, which unlocks the keybag.")
        }
        return EnvironmentFinding(
            check: id, severity: .warning,
            summary: "the keybag is linked to the login password, but no PAM service in \(context.pamFolder.path) names pam_tresor",
            reason: "Logging in unlocks nothing until the module is installed: sudo scripts/install-pam --enable "
                + "(docs/SECURITY.md, \"Unlock at login\").")
    }

    /// The PAM services (files of `folder`) with a line naming `pam_tresor`, not commented out.
    /// - Parameter folder: `/etc/pam.d` on a real system.
    /// - Returns: their names, sorted.
    static func servicesNamingTheModule(in folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted().filter { name in
            guard let text = try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) else { return false }
            return text.split(separator: "\n").contains { line in
                !line.drop { $0 == " " || $0 == "\t" }.hasPrefix("#") && line.contains("pam_tresor")
            }
        }
    }
}

/// The PAM module that unlocks the keybag at login, as the machine's PAM configuration names it.
public enum LoginModule {
    /// Whether a PAM service of `/etc/pam.d` names `pam_tresor` (`tresor doctor`'s `login-module`).
    public static var isInstalled: Bool { !LoginModuleCheck.servicesNamingTheModule(in: URL(fileURLWithPath: "/etc/pam.d")).isEmpty }
}
