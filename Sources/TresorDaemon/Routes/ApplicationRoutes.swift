import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// `tresor app register | list | remove`: only the CLI may manage applications, and
/// registering needs the keybag unlocked and the passcode again (docs/API.md, "Applications").
struct ApplicationRoutes {
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.applications)) { request, context -> TresorKeychain.Application in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            let body = try await request.decode(as: RegisterApplicationRequest.self, context: context)
            let keybag = try slot.keybag()
            guard keybag.lockState == .unlocked else {
                throw KeychainError.interactionNotAllowed("registering an application needs the keybag unlocked")
            }
            if keybag.status.isPasscodeSet {
                guard let passcode = body.passcode else {
                    throw KeychainError.authFailed("registering an application needs the passcode again")
                }
                let code = try Passcode(passcode)
                try await offloaded { try keybag.verify(passcode: code) }
            }
            let url = URL(fileURLWithPath: body.executablePath)
            let application = TresorKeychain.Application(
                applicationID: body.applicationID, teamID: body.teamID, accessGroups: body.accessGroups,
                executableSHA256: try FileHashes.shared.sha256(of: url), executablePath: url.standardizedFileURL.path,
                usesSecretService: body.usesSecretService ?? false, isDevelopmentBuild: body.isDevelopmentBuild ?? false)
            // Registering an id again replaces its executable (a rebuild): the passcode was given for it.
            let replaced = try keychains.loginKeychain().applications.register(application, replacing: true)
            context.logger.notice(
                replaced ? "application registered again (executable replaced)" : "application registered",
                metadata: ["id": "\(application.applicationID)", "team": "\(application.teamID)"])
            return application
        }
        router.get(RouterPath(Route.applications)) { _, context -> ApplicationsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            return ApplicationsResponse(applications: try keychains.loginKeychain().applications.list())
        }
        router.delete(RouterPath(Route.applications + "/:id")) { _, context -> Response in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            let id = try context.parameters.require("id")
            try keychains.loginKeychain().applications.remove(applicationID: id)
            context.logger.notice("application removed", metadata: ["id": "\(id)"])
            return Response(status: .noContent)
        }
    }
}

extension TresorKeychain.Application: ResponseEncodable {}
extension ApplicationsResponse: ResponseEncodable {}
