import Foundation
import Hummingbird
import TresorKeybag
import TresorProtocol
import TresorSystem

/// `tresor approve`'s routes (docs/API.md, "Approvals"): the next application waiting for the
/// user's presence, and the user's answer — allowing needs the passcode, typed into `tresor`,
/// never into the application. The `tresor` CLI only, and only in the foreground of a terminal
/// (``Approver``).
struct ApprovalRoutes {
    let approvals: ApprovalBroker
    let slot: KeybagSlot
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.approvalsNext)) { request, context -> NextApprovalResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "approvals")
            var request = request
            let bytes = try await request.collectBody(upTo: context.maxUploadSize)
            let body = bytes.readableBytes == 0 ? NextApprovalRequest() : try await request.decode(as: NextApprovalRequest.self, context: context)
            let seconds = body.waitSeconds ?? 25
            guard (1...60).contains(seconds) else { throw APIError(.param, "waitSeconds is 1 to 60") }
            let approver = try Approver(pid: try context.requireClient().credentials.pid)
            return NextApprovalResponse(request: await approvals.nextRequest(within: .seconds(seconds), isUser: approver.isUser))
        }
        router.post(RouterPath(Route.approvalsAnswer)) { request, context -> Response in
            try callers.requireCLI(try context.requireClient(), toManage: "approvals")
            var decoded = try await request.decode(as: ApprovalAnswer.self, context: context)
            let given = try Passcode.taking(&decoded.passcode)
            let body = decoded
            if body.allow {
                guard let passcode = given else { throw APIError(.passcodeRequired, "allowing needs the passcode") }
                let keybag = try slot.keybag()
                try await offloaded { try keybag.verify(passcode: passcode) }  // a wrong one counts, as at unlock
            }
            if let seconds = body.rememberSeconds, !(1...SecretServiceTrustGrant.longestSeconds).contains(seconds) {
                throw APIError(.param, "rememberSeconds is 1 second to 366 days")
            }
            guard approvals.settle(body.id, allowed: body.allow, rememberFor: body.rememberSeconds.map(TimeInterval.init)) else {
                throw APIError(.notFound, "no application waits for this answer any more (it gave up or was answered)")
            }
            context.logger.notice("approvals: answered", metadata: ["id": "\(body.id)", "allowed": "\(body.allow)"])
            return Response(status: .noContent)
        }
    }
}

extension NextApprovalResponse: ResponseEncodable {}
