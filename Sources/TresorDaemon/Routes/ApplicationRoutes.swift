import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorModel
import TresorProtocol
import TresorSystem

/// `tresor app register | list | remove`: only the CLI may manage applications, and
/// registering or removing one needs the keybag unlocked and the passcode again (docs/API.md,
/// "Applications").
/// A generic client (an interpreter, secret-tool, git's helpers: ``GenericClients``) is never
/// registered for the Secret Service: any process of the user can run it with arguments of its
/// choosing, so its groups would be every process's (docs/SECURITY.md, "Generic clients").
struct ApplicationRoutes {
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let callers: CallerResolver
    let genericClients: GenericClients

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.applications)) { request, context -> TresorKeychain.Application in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            var decoded = try await request.decode(as: RegisterApplicationRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            try await slot.requireConsent(passcode: passcode, toDo: "registering an application")
            // The file itself, as a process running it shows it (`/proc/PID/exe`): a development
            // build named through a symbolic link (SwiftPM's `.build/debug`) is found by its path.
            let url = URL(fileURLWithPath: body.executablePath).resolvingSymlinksInPath()
            let hash = try FileHashes.shared.sha256(of: url)
            if body.usesSecretService == true, genericClients.contains(path: url.path, sha256: hash) {
                throw APIError(
                    .param,
                    "\(url.lastPathComponent) is a generic client: any process of yours can run it with arguments of its choosing, so its groups on the Secret Service would be every process's. Trust it for a while instead (`tresor secret-service trust add`), or register the program that runs it"
                )
            }
            let application = TresorKeychain.Application(
                applicationID: body.applicationID, teamID: body.teamID, accessGroups: body.accessGroups,
                executableSHA256: hash, executablePath: url.standardizedFileURL.path,
                usesSecretService: body.usesSecretService ?? false, isDevelopmentBuild: body.isDevelopmentBuild ?? false)
            // Registering an id again replaces its executable (a rebuild): the passcode was given for it.
            let applications = try keychains.loginKeychain().applications
            let replaced: Bool
            do {
                replaced = try applications.register(application, replacing: true)
            } catch KeychainError.duplicateItem {
                // One executable is one application: the file's hash names it.
                let holder = try applications.application(executableSHA256: hash)?.applicationID ?? "another application"
                throw APIError(
                    .duplicateItem,
                    "\(url.path) is registered already, as \(holder): one executable is one application — register it again with --id \(holder), or `tresor app remove \(holder)` first"
                )
            }
            context.logger.notice(
                replaced ? "application registered again (executable replaced)" : "application registered",
                metadata: ["id": "\(application.applicationID)", "team": "\(application.teamID)"])
            return application
        }
        router.get(RouterPath(Route.applications)) { _, context -> ApplicationsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            return ApplicationsResponse(applications: try keychains.loginKeychain().applications.list())
        }
        router.post(RouterPath(Route.removeApplication)) { request, context -> Response in
            try callers.requireCLI(try context.requireClient(), toManage: "applications")
            var decoded = try await request.decode(as: RemoveApplicationRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            try await slot.requireConsent(passcode: passcode, toDo: "removing an application")
            let id = body.applicationID
            do {
                try keychains.loginKeychain().applications.remove(applicationID: id)
            } catch KeychainError.itemNotFound {
                throw APIError(.notFound, "no registered application \(id.prefix(200)) (`tresor app list` lists them)")
            }
            context.logger.notice("application removed", metadata: ["id": "\(id)"])
            return Response(status: .noContent)
        }
    }
}

extension TresorKeychain.Application: ResponseEncodable {}
extension ApplicationsResponse: ResponseEncodable {}
