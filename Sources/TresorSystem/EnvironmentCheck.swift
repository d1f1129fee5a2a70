import FoundationEssentials
import Glibc

/// One result of an environment check, as `tresor doctor` prints it and the daemon logs it at start.
///
/// Findings describe the environment only (paths, modes, pids, variable names); they never carry
/// secret material, so they are safe to log and to print as JSON.
public struct EnvironmentFinding: Codable, Equatable, Sendable {
    /// How much a finding matters.
    public enum Severity: String, Codable, Sendable {
        /// Nothing to do.
        case ok
        /// Weakens the protection; worth fixing.
        case warning
        /// Defeats part of the protection; fix before trusting the keychain with secrets.
        case problem
    }

    /// Stable identifier of the check, one of ``EnvironmentChecks/checkIDs``.
    public var check: String
    /// How much the finding matters.
    public var severity: Severity
    /// One line: what was found.
    public var summary: String
    /// Why it matters and what to do about it.
    public var reason: String

    /// Creates a finding.
    public init(check: String, severity: Severity, summary: String, reason: String) {
        self.check = check
        self.severity = severity
        self.summary = summary
        self.reason = reason
    }
}

/// What the environment checks look at. Every input is injectable so tests can point the
/// checks at a temporary home and a fake `/proc` and `/sys` tree.
public struct EnvironmentCheckContext: Sendable {
    /// Tresor's data folder (the home).
    public var home: URL
    /// The home's device key, kept outside it (`TresorPaths.deviceKey`); nil, not checked.
    public var deviceKey: URL?
    /// The `tresor`/`tresord` binaries whose writability by others is checked.
    public var executables: [URL]
    /// The environment of the process, for the dynamic-linker variables.
    public var environment: [String: String]
    /// Where procfs is mounted; `/proc` on a real system.
    public var procRoot: URL
    /// Where sysfs is mounted; `/sys` on a real system (used to recognise encrypted swap).
    public var sysRoot: URL
    /// The uid the home must belong to; the effective uid of this process by default.
    public var userID: UInt32
    /// The PAM configuration's folder; `/etc/pam.d` on a real system.
    public var pamFolder: URL

    /// Creates a context; everything but the home defaults to the running process and the real system.
    /// - Parameters:
    ///   - home: Tresor's data folder.
    ///   - deviceKey: the home's device key file; nil leaves it unchecked.
    ///   - executables: binaries to check; by default the executable of the running process.
    ///   - environment: by default `ProcessInfo.processInfo.environment`.
    ///   - procRoot: by default `/proc`.
    ///   - sysRoot: by default `/sys`.
    ///   - userID: by default `geteuid()`.
    ///   - pamFolder: by default `/etc/pam.d`.
    public init(
        home: URL,
        deviceKey: URL? = nil,
        executables: [URL] = EnvironmentCheckContext.currentExecutable(),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        procRoot: URL = URL(fileURLWithPath: "/proc"),
        sysRoot: URL = URL(fileURLWithPath: "/sys"),
        userID: UInt32 = geteuid(),
        pamFolder: URL = URL(fileURLWithPath: "/etc/pam.d")
    ) {
        self.pamFolder = pamFolder
        self.home = home
        self.deviceKey = deviceKey
        self.executables = executables
        self.environment = environment
        self.procRoot = procRoot
        self.sysRoot = sysRoot
        self.userID = userID
    }

    /// The binary of the running process (from `/proc/self/exe`), or none if it cannot be found.
    public static func currentExecutable() -> [URL] {
        ProcessImage.ownExecutablePath.map { [URL(fileURLWithPath: $0)] } ?? []
    }
}

/// The environment checks behind `tresor doctor`, also run by the daemon at start.
public enum EnvironmentChecks {
    /// The id of every check, in the order ``run(_:)`` reports them.
    public static let checkIDs: [String] = [
        HomePermissionsCheck.id,
        DeviceKeyPermissionsCheck.id,
        RunningAsRootCheck.id,
        CoreDumpsCheck.id,
        TracerCheck.id,
        LinkerEnvironmentCheck.id,
        PtraceScopeCheck.id,
        WritableExecutablesCheck.id,
        SwapCheck.id,
        LoginModuleCheck.id,
    ]

    /// Runs every check for the current process; one finding per check (ok findings included),
    /// in the order of ``checkIDs``.
    public static func run(_ context: EnvironmentCheckContext) -> [EnvironmentFinding] {
        [
            HomePermissionsCheck.run(context),
            DeviceKeyPermissionsCheck.run(context),
            RunningAsRootCheck.run(context),
            CoreDumpsCheck.run(context),
            TracerCheck.run(context),
            LinkerEnvironmentCheck.run(context),
            PtraceScopeCheck.run(context),
            WritableExecutablesCheck.run(context),
            SwapCheck.run(context),
            LoginModuleCheck.run(context),
        ]
    }

    /// Printed with every report: the checks ask the system about itself, so they only
    /// catch mistakes and ordinary attacks, not an attacker who already controls the system.
    public static let disclaimer = """
        These checks ask the system about itself. A compromised system — an attacker with root, \
        a malicious kernel or kernel module, a tampered /proc or a replaced Tresor binary — can lie \
        to them and hide from them. A clean report means no mistakes were found, not that the \
        system is trustworthy.
        """
}
