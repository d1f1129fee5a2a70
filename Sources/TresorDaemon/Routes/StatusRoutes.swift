import Foundation
import Hummingbird
import TresorKeybag
import TresorProtocol
import TresorSystem

/// `GET /v1/status` and `GET /v1/doctor`.
struct StatusRoutes {
    let status: StatusProvider
    let doctor: @Sendable () -> [EnvironmentFinding]

    func register(on router: Router<DaemonRequestContext>) {
        router.get(RouterPath(Route.status)) { _, _ in try status.current() }
        router.get(RouterPath(Route.doctor)) { _, _ in DoctorReport(findings: doctor()) }
    }
}

extension DaemonStatus: ResponseEncodable {}
extension Hold: ResponseEncodable {}
extension DoctorReport: ResponseEncodable {}
