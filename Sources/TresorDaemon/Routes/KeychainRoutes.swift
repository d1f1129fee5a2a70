import Foundation
import Hummingbird
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// `tresor keychain create | list | delete`: keychains with their own passcode and lock
/// state. Creating and deleting is the CLI's alone; anyone identified may list.
struct KeychainRoutes {
    let keychains: KeychainProvider
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.get(RouterPath(Route.keychains)) { _, _ -> KeychainsResponse in
            KeychainsResponse(keychains: keychains.summaries())
        }
        router.post(RouterPath(Route.keychains)) { request, context -> KeychainsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "keychains")
            var decoded = try await request.decode(as: CreateKeychainRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            _ = try await offloaded { try keychains.create(name: body.name, passcode: passcode) }
            context.logger.notice("keychain created", metadata: ["name": "\(body.name)"])
            return KeychainsResponse(keychains: keychains.summaries())
        }
        router.post(RouterPath(Route.deleteKeychain)) { request, context -> KeychainsResponse in
            try callers.requireCLI(try context.requireClient(), toManage: "keychains")
            var decoded = try await request.decode(as: DeleteKeychainRequest.self, context: context)
            let passcode = try Passcode.taking(&decoded.passcode)
            let body = decoded
            try await offloaded { try keychains.delete(name: body.name, passcode: passcode) }
            context.logger.notice("keychain deleted", metadata: ["name": "\(body.name)"])
            return KeychainsResponse(keychains: keychains.summaries())
        }
    }
}

extension KeychainsResponse: ResponseEncodable {}
