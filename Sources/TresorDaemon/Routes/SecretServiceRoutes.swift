import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// `tresor secret-service owners | allow | revoke` and `tresor import secret-service`: the
/// user, through the CLI, sees which executable owns which Secret Service item, lets one
/// executable use another's items and copies another provider's items in — with the keybag
/// unlocked and the passcode again, as registering an application needs.
struct SecretServiceRoutes {
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.get(RouterPath(Route.secretServiceOwners)) { _, context -> SecretServiceOwnersResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service grants")
            return try await offloaded { try owners() }
        }
        router.post(RouterPath(Route.secretServiceGrants)) { request, context -> SecretServiceOwnersResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service grants")
            var decoded = try await request.decode(as: ExecutableGrantRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            try await slot.requireConsent(passcode: passcode, toDo: "changing a grant")
            let grant = try grant(body)
            let grants = try keychains.executableGrants()
            if body.revoke { try grants.revoke(grant) } else { try grants.allow(grant) }
            context.logger.notice(
                body.revoke ? "Secret Service grant revoked" : "Secret Service grant added",
                metadata: [
                    "grantee": "\(grant.grantee)", "group": "\(grant.group ?? "one item")",
                ])
            return try owners()
        }
        router.post(RouterPath(Route.secretServiceImport)) { request, context -> SecretServiceImportResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "Secret Service imports")
            var decoded = try await request.decode(as: SecretServiceImportRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            try await slot.requireConsent(passcode: passcode, toDo: "importing Secret Service items")
            let response = try await offloaded { try importItems(body) }
            context.logger.notice(
                "Secret Service items imported",
                metadata: [
                    "group": "\(response.group)", "copied": "\(response.copied.count)", "skipped": "\(response.skipped.count)",
                ])
            return response
        }
    }

    /// The grant the request names: another executable's group, a group named directly, or
    /// one item — which must exist.
    private func grant(_ body: ExecutableGrantRequest) throws -> ExecutableGrant {
        let grantee = try group(ofExecutable: body.executablePath)
        switch (body.ownerPath, body.group, body.itemID) {
        case (let path?, nil, nil): return ExecutableGrant(grantee: grantee, group: try group(ofExecutable: path))
        case (nil, let group?, nil) where !group.isEmpty: return ExecutableGrant(grantee: grantee, group: group)
        case (nil, nil, let id?):
            let everything = Caller(accessGroups: [], defaultAccessGroup: CallerResolver.cliGroup, seesEveryGroup: true)
            guard Int64(id) != nil,
                try keychains.loginKeychain().copyMatching(ItemQuery(.genericPassword, id: id), caller: everything).isEmpty == false
            else {
                throw KeychainError.itemNotFound
            }
            return ExecutableGrant(grantee: grantee, item: id)
        default: throw KeychainError.param("name one of: the owner's executable, a group, an item")
        }
    }

    /// The group the Secret Service gives the executable at `path` (by the daemon's rules:
    /// a registered application's own group, else by path or by hash).
    /// - Parameter path: the executable's path; links are followed.
    /// - Returns: its access group, as the provider gives it when the executable calls.
    /// - Throws: when the file cannot be read, or the registry cannot be opened.
    func group(ofExecutable path: String) throws -> String {
        let url = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        let hash = try FileHashes.shared.sha256(of: url)
        if let application = try keychains.loginKeychain().applications.application(executableSHA256: hash) {
            return application.applicationID
        }
        return SecretServiceIdentities.group(path: url.path, sha256: hash, uid: getuid())
    }

    /// Every executable group that owns generic passwords, with their items (ids and labels).
    private func owners() throws -> SecretServiceOwnersResponse {
        let everything = Caller(accessGroups: [CallerResolver.cliGroup], defaultAccessGroup: CallerResolver.cliGroup, seesEveryGroup: true)
        let items: [KeychainItem]
        do {
            items = try keychains.loginKeychain().copyMatching(ItemQuery(.genericPassword, limit: .all), caller: everything)
        } catch KeychainError.itemNotFound {
            items = []
        }
        var byOwner: [String: [SecretServiceOwner.OwnedItem]] = [:]
        for item in items {
            guard let group = item.attributes?.accessGroup, ExecutableGroup.isSecretServiceGroup(group) else { continue }
            byOwner[group, default: []].append(.init(id: item.id, label: item.attributes?.label ?? ""))
        }
        return SecretServiceOwnersResponse(
            owners: byOwner.keys.sorted().map { SecretServiceOwner(owner: $0, items: byOwner[$0]!) },
            grants: try keychains.executableGrants().list())
    }
}

extension SecretServiceOwnersResponse: ResponseEncodable {}
