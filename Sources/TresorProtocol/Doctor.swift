import TresorSystem

/// `GET /v1/doctor`: the daemon's own view of its environment (its tracer, its core-dump
/// state, its uid), to put beside the CLI's.
public struct DoctorReport: Codable, Sendable {
    /// One finding per check the daemon ran (`EnvironmentFinding`).
    public var findings: [EnvironmentFinding]
    /// Makes a report; the parameter is the property of the same name.
    public init(findings: [EnvironmentFinding]) { self.findings = findings }
}
