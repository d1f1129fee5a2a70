import TresorSystem

/// `GET /v1/doctor`: the daemon's own view of its environment (its tracer, its core-dump
/// state, its uid), to put beside the CLI's.
public struct DoctorReport: Codable, Sendable {
    public var findings: [EnvironmentFinding]
    public init(findings: [EnvironmentFinding]) { self.findings = findings }
}
