import Hummingbird
import TresorProtocol
import TresorSystem

/// `POST /v1/secret-service/bus`: a `tresord --secret-service` started in a desktop session hands
/// that session's bus to the daemon already running for its home, which then answers the Secret
/// Service there (``SecretServiceSlot``) and follows its screen saver.
///
/// Any process of the user may ask, as any may stop the daemon and start it again on a bus of its
/// choosing: the bus's own checks of each client stay what they are (docs/SECURITY.md, "Borrowed
/// bus connections").
struct SecretServiceBusRoutes {
    /// Answers on the bus at an address; whether that started the provider.
    let answer: @Sendable (String) throws -> Bool
    let served: ServedInterfaces

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.secretServiceBus)) { request, context -> SecretServiceBusAnswer in
            _ = try context.requireClient()
            let body = try await request.decode(as: SecretServiceBusRequest.self, context: context)
            guard body.address.hasPrefix("unix:"), body.address.utf8.count <= 1024, !body.address.contains("\0") else {
                throw APIError(.param, "a session bus address starts with unix: (DBUS_SESSION_BUS_ADDRESS)")
            }
            let started = try await offloaded { try answer(body.address) }
            if started { context.logger.notice("the Secret Service was handed a session bus", metadata: ["address": "\(body.address)"]) }
            return SecretServiceBusAnswer(secretService: served.current.secretService ?? "answering on the session bus", started: started)
        }
    }
}

extension SecretServiceBusAnswer: ResponseEncodable {}
