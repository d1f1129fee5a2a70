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
            let body = try await decodeStrictly(AddItemRequest.self, request, context, names: AddShape.self)
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let item = try keychains.keychain(named: body.keychain).add(body.itemClass, attributes: body.attributes, secret: body.secret, caller: caller)
            context.logger.info("item added", metadata: ["class": "\(body.itemClass.rawValue)", "id": "\(item.id)"])
            return item
        }
        router.post(RouterPath(Route.searchItems)) { request, context -> ItemsResponse in
            let body = try await decodeStrictly(SearchItemsRequest.self, request, context, names: QueryShape.self)
            if isSystemRoots(body.keychain) { return ItemsResponse(items: try keychains.systemRoots.copyMatching(body.query)) }
            let caller = try callers.caller(for: try context.requireClient(), passcode: body.passcode)
            let keychain = try keychains.keychain(named: body.keychain)
            // A lookup by primary key takes microseconds: answered here, without the two thread
            // hand-offs of `offloaded`. A scan, or a passcode to check (one slow KDF run), must
            // not hold up this executor's thread.
            if body.passcode == nil, let items = try keychain.copyMatchingFromIndex(body.query, caller: caller) {
                return ItemsResponse(items: items)
            }
            return ItemsResponse(items: try await offloaded { try keychain.copyMatching(body.query, caller: caller) })
        }
        router.post(RouterPath(Route.updateItems)) { request, context -> CountResponse in
            let body = try await decodeStrictly(UpdateItemsRequest.self, request, context, names: UpdateShape.self)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: body.passcode)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.update(body.query, changes: body.changes, secret: body.secret, caller: caller) }
            context.logger.info("items updated", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
        router.post(RouterPath(Route.deleteItems)) { request, context -> CountResponse in
            let body = try await decodeStrictly(DeleteItemsRequest.self, request, context, names: QueryShape.self)
            if isSystemRoots(body.keychain) { throw KeychainError.readOnly }
            let caller = try callers.caller(for: try context.requireClient(), passcode: nil)
            let keychain = try keychains.keychain(named: body.keychain)
            let count = try await offloaded { try keychain.delete(body.query, caller: caller) }
            context.logger.info("items deleted", metadata: ["class": "\(body.query.itemClass.rawValue)", "count": "\(count)"])
            return CountResponse(count: count)
        }
    }

    private func isSystemRoots(_ name: String?) -> Bool {
        name == KeychainName.systemRoots
    }
}

/// Decodes a request and refuses attribute names the keychain does not know — Codable alone
/// would silently ignore a misspelt `acount`. The names are read from the same decoder, over
/// the same parsed JSON, as the request itself (`Shape`), so no JSON quirk (duplicate keys,
/// odd escapes) can show the check one object and the decoder another — and the body is
/// parsed once.
func decodeStrictly<T: Decodable, Shape: AttributeNamesShape>(
    _ type: T.Type, _ request: Request, _ context: DaemonRequestContext, names shape: Shape.Type
) async throws -> T {
    let decoded = try await request.decode(as: StrictlyNamed<T, Shape>.self, context: context)
    if let unknown = decoded.shape.attributeNames.sorted().first(where: { !ItemAttributes.knownNames.contains($0) }) {
        throw KeychainError.param("unknown attribute \(String(unknown.prefix(64)).debugDescription)")
    }
    return decoded.value
}

/// A request body read twice from one decoder: as the request, and as the names it carries.
private struct StrictlyNamed<T: Decodable, Shape: AttributeNamesShape>: Decodable {
    let value: T
    let shape: Shape

    init(from decoder: Decoder) throws {
        value = try T(from: decoder)
        shape = try Shape(from: decoder)
    }
}

/// The attribute names a request carries, wherever its shape keeps attributes.
protocol AttributeNamesShape: Decodable {
    var attributeNames: [String] { get }
}

/// The keys of one JSON object, as the decoder sees them.
struct ObjectKeys: Decodable {
    let names: [String]

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: Decoder) throws {
        names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
    }
}

struct AddShape: AttributeNamesShape {
    let attributes: ObjectKeys
    var attributeNames: [String] { attributes.names }
}

struct QueryShape: AttributeNamesShape {
    struct Query: Decodable { let attributes: ObjectKeys }
    let query: Query
    var attributeNames: [String] { query.attributes.names }
}

struct UpdateShape: AttributeNamesShape {
    let query: QueryShape.Query
    let changes: ObjectKeys
    var attributeNames: [String] { query.attributes.names + changes.names }
}

extension KeychainItem: ResponseEncodable {}
extension ItemsResponse: ResponseEncodable {}
extension CountResponse: ResponseEncodable {}
