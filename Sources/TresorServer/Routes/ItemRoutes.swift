import Foundation
import Hummingbird
import TresorKeychain
import TresorProtocol

/// The keychain routes: add, search, update, delete (SPEC §3.1). Each request is answered for
/// the caller the daemon identified, never for the one a request claims to be.
struct ItemRoutes {
    let keychains: KeychainProvider
    let callers: CallerResolver

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.addItem)) { request, context -> KeychainItem in
            let body = try await decodeStrictly(AddItemRequest.self, request, context, attributePaths: [["attributes"]])
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            if try isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let item = try keychains.keychain(named: body.keychain).add(body.itemClass, attributes: body.attributes, secret: body.secret, caller: caller)
            context.logger.info("item added", metadata: ["class": "\(body.itemClass.rawValue)", "id": "\(item.id)"])
            return item
        }
        router.post(RouterPath(Route.searchItems)) { request, context -> ItemsResponse in
            let body = try await decodeStrictly(SearchItemsRequest.self, request, context, attributePaths: [["query", "attributes"]])
            if try isSystemRoots(body.keychain) { return ItemsResponse(items: try keychains.systemRoots.copyMatching(body.query)) }
            let caller = try callers.caller(for: try context.requireClient(), passcode: body.passcode)
            let keychain = try keychains.keychain(named: body.keychain)
            return ItemsResponse(items: try await offloaded { try keychain.copyMatching(body.query, caller: caller) })
        }
        router.post(RouterPath(Route.updateItems)) { request, context -> CountResponse in
            let body = try await decodeStrictly(
                UpdateItemsRequest.self, request, context, attributePaths: [["query", "attributes"], ["changes"]])
            if try isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: body.passcode)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.update(body.query, changes: body.changes, secret: body.secret, caller: caller) }
            context.logger.info("items updated", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
        router.post(RouterPath(Route.deleteItems)) { request, context -> CountResponse in
            let body = try await decodeStrictly(DeleteItemsRequest.self, request, context, attributePaths: [["query", "attributes"]])
            if try isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.delete(body.query, caller: caller) }
            context.logger.info("items deleted", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
    }

    private func isSystemRoots(_ name: String?) throws -> Bool {
        name == KeychainName.systemRoots
    }
}

/// Decodes a request and refuses attribute names the keychain does not know — Codable alone
/// would silently ignore a misspelt `acount`.
func decodeStrictly<T: Decodable>(
    _ type: T.Type, _ request: Request, _ context: DaemonRequestContext, attributePaths: [[String]]
) async throws -> T {
    var request = request
    let buffer = try await request.collectBody(upTo: context.maxUploadSize)
    let data = Data(buffer.readableBytesView)
    if let object = try? JSONSerialization.jsonObject(with: data) {
        for path in attributePaths {
            var node: Any? = object
            for key in path { node = (node as? [String: Any])?[key] }
            guard let attributes = node as? [String: Any] else { continue }
            if let unknown = attributes.keys.sorted().first(where: { !ItemAttributes.knownNames.contains($0) }) {
                throw KeychainError.param("unknown attribute \(String(unknown.prefix(64)).debugDescription)")
            }
        }
    }
    return try await request.decode(as: type, context: context)
}

extension KeychainItem: ResponseEncodable {}
extension ItemsResponse: ResponseEncodable {}
extension CountResponse: ResponseEncodable {}
