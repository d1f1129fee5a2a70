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
            let body = try await request.decode(as: ApprovalAnswer.self, context: context)
            if body.allow {
                guard let text = body.passcode else { throw APIError(.passcodeRequired, "allowing needs the passcode") }
                let passcode = try Passcode(text)
                let keybag = try slot.keybag()
                try await offloaded { try keybag.verify(passcode: passcode) }  // a wrong one counts, as at unlock
            }
            if let seconds = body.rememberSeconds, !(1...SecretServiceTrustRoutes.longest).contains(seconds) {
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

/// The `tresor approve` asking for a request, and whether it is the user: in the foreground
/// process group of its controlling terminal, where what the user types goes. Any process of the
/// user can run the genuine `tresor approve`; run in the background, with no terminal or as a
/// background job of one, it would take every request first — seeing who asks for which item —
/// and refuse it, and the user's own approver would never see it (docs/SECURITY.md, "Who may
/// approve").
struct Approver: Sendable {
    let pid: Int32
    /// The process's start, so that a pid given to another process later is not taken for it.
    let started: UInt64

    /// - Throws: `missingEntitlement` saying why, when `pid` is not in the foreground of a terminal.
    init(pid: Int32) throws {
        guard ControllingTerminal.inForeground(pid: pid) != nil, let image = ProcessImage.of(pid: pid) else {
            throw APIError(
                .missingEntitlement,
                "tresor approve answers only in the foreground of a terminal: run it there, not in the background or without a terminal")
        }
        self.pid = pid
        started = image.startTime
    }

    /// Whether it is still the same process, in the foreground of its terminal.
    @Sendable func isUser() -> Bool {
        ControllingTerminal.inForeground(pid: pid) != nil && ProcessImage.of(pid: pid)?.startTime == started
    }
}
