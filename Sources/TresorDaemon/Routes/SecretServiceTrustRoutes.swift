import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSecretService
import TresorSystem

/// `tresor secret-service trust [add | remove]`: the generic Secret Service clients the user
/// trusts (``SecretServiceTrust``). Trusting one ahead of time needs what a grant needs — the
/// keybag unlocked and the passcode again; listing and taking trust back need the CLI only.
struct SecretServiceTrustRoutes {
    let trust: SecretServiceTrust
    let genericClients: GenericClients
    let routes: SecretServiceRoutes

    func register(on router: Router<DaemonRequestContext>) {
        let callers = routes.callers
        router.get(RouterPath(Route.secretServiceTrust)) { _, context -> SecretServiceTrustList in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service trust")
            return SecretServiceTrustList(trusted: trust.list())
        }
        router.post(RouterPath(Route.secretServiceTrust)) { request, context -> SecretServiceTrustList in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service trust")
            var decoded = try await request.decode(as: SecretServiceTrustGrant.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            if let seconds = body.seconds, !(1...SecretServiceTrustGrant.longestSeconds).contains(seconds) {
                throw APIError(.param, "a trust lasts 1 second to 366 days")
            }
            guard (1...16).contains(body.executablePaths.count) else { throw APIError(.param, "name 1 to 16 executables") }
            try await routes.slot.requireConsent(passcode: passcode, toDo: "trusting a Secret Service client")
            let groups = try await offloaded {
                try body.executablePaths.map { path in
                    let (group, generic) = try ownGroup(of: path)
                    guard generic else {
                        throw APIError(
                            .param, "\(path) is not a generic client: it reads its own items without asking (docs/SECURITY.md, \"Generic clients\")")
                    }
                    return (group, URL(fileURLWithPath: path).resolvingSymlinksInPath().path)
                }
            }
            for (group, path) in groups {
                trust.grant(group, path: path, for: body.seconds.map(TimeInterval.init))
                context.logger.notice(
                    "Secret Service client trusted ahead of time",
                    metadata: [
                        "executable": "\(group)", "seconds": "\(body.seconds.map(String.init) ?? "until the daemon stops")",
                    ])
            }
            return SecretServiceTrustList(trusted: trust.list())
        }
        router.post(RouterPath(Route.secretServiceTrustRemove)) { request, context -> SecretServiceTrustList in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service trust")
            let body = try await request.decode(as: SecretServiceTrustRemoval.self, context: context)
            switch (body.executablePath, body.all) {
            case (let path?, false):
                guard !path.isEmpty else { throw APIError(.param, "name an executable, or all") }
                // Named as the list names it (`exe:PATH`, `exe-sha256:HEX`), no file is read: it may
                // have been removed or rebuilt since.
                let named = path.hasPrefix("exe:") || path.hasPrefix("exe-sha256:") || trust.list().contains { $0.executable == path }
                let group = named ? path : try await offloaded { try ownGroup(of: path).group }
                guard trust.remove(group) > 0 else { throw APIError(.notFound, "\(path) is not trusted") }
            case (nil, true):
                trust.remove(nil)
            default:
                throw APIError(.param, "name an executable, or all")
            }
            context.logger.notice("Secret Service trust taken back", metadata: ["executable": "\(body.executablePath ?? "all")"])
            return SecretServiceTrustList(trusted: trust.list())
        }
    }

    /// The own group the Secret Service gives the executable at `path` (links followed), by path or
    /// by hash as for a caller, and whether it is a generic client.
    private func ownGroup(of path: String) throws -> (group: String, generic: Bool) {
        let url = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let hash = try FileHashes.shared.sha256(of: url)
        return (SecretServiceIdentities.group(path: url.path, sha256: hash, uid: getuid()), genericClients.contains(path: url.path, sha256: hash))
    }
}

extension SecretServiceTrustList: ResponseEncodable {}
