import Foundation
import TresorKit

/// Adds an item to the keychain, as `SecItemAdd` does on Apple platforms.
/// - Parameters:
///   - attributes: `kSecClass`, the item's attributes, `kSecValueData`, and optionally
///     `kSecReturn…` keys saying what to put in `result`.
///   - result: Receives what the `kSecReturn…` keys asked for, or nil; may be `nil` itself.
/// - Returns: `errSecSuccess`, or `errSecDuplicateItem`, `errSecParam`,
///   `errSecInteractionNotAllowed` (locked), `errSecMissingEntitlement` (an executable not
///   registered with `tresor app register`), `errSecNotAvailable` (no daemon)…
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return SecItemCall.run {
        let request = try SecItemRequest(attributes, purpose: .add)
        guard let itemClass = request.itemClass else { throw SecItemFailure(errSecParam) }
        let added = try SecItemKeychain.withKeychain { keychain in
            try keychain.add(itemClass, attributes: request.attributes, secret: request.secret ?? Data())
        }
        guard request.returnData || request.returnAttributes || request.returnPersistentReference else { return }
        var lookup = request
        lookup.id = added.id
        lookup.limit = .one
        result?.pointee = try SecItemCall.copy(lookup)
    }
}

/// Finds items, as `SecItemCopyMatching` does on Apple platforms.
/// - Parameters:
///   - query: `kSecClass`, attributes to match, `kSecMatchLimit` and `kSecReturn…` keys.
///   - result: Receives `Data`, an attributes dictionary, or an array of either, as the
///     `kSecReturn…` keys and the limit ask; nil when none is asked (an existence check).
/// - Returns: `errSecSuccess`, or `errSecItemNotFound` (also for `kSecMatchLimitAll` with no
///   match, and for every `kSecClassIdentity` search), `errSecParam`,
///   `errSecInteractionNotAllowed`, `errSecAuthFailed` (user presence not given)…
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return SecItemCall.run {
        let request = try SecItemRequest(query, purpose: .search)
        guard request.itemClass != nil else { throw SecItemFailure(request.isIdentity ? errSecItemNotFound : errSecParam) }
        result?.pointee = try SecItemCall.copy(request)
    }
}

/// Changes the matching items, as `SecItemUpdate` does on Apple platforms.
/// - Parameters:
///   - query: `kSecClass` and the attributes the items to change must have.
///   - attributesToUpdate: The attributes to set, and `kSecValueData` for a new secret.
/// - Returns: `errSecSuccess`, or `errSecItemNotFound` when nothing matches,
///   `errSecDuplicateItem` when a change would make two items alike, `errSecParam`…
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemCall.run {
        let request = try SecItemRequest(query, purpose: .search)
        let changes = try SecItemRequest(attributesToUpdate, purpose: .changes)
        guard request.itemClass != nil else { throw SecItemFailure(request.isIdentity ? errSecItemNotFound : errSecParam) }
        let changed = try SecItemKeychain.withKeychain { keychain in
            try request.queries(returnData: false, returnAttributes: false).reduce(0) { count, query in
                var query = query
                query.limit = .all
                return try count + SecItemCall.countingNotFoundAsZero {
                    try keychain.update(query, secret: changes.secret, changes: changes.attributes)
                }
            }
        }
        guard changed > 0 else { throw SecItemFailure(errSecItemNotFound) }
    }
}

/// Deletes every matching item, as `SecItemDelete` does on Apple platforms.
/// - Parameter query: `kSecClass` and the attributes the items to delete must have.
/// - Returns: `errSecSuccess`, or `errSecItemNotFound` when nothing matches, `errSecParam`…
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemCall.run {
        let request = try SecItemRequest(query, purpose: .search)
        guard request.itemClass != nil else { throw SecItemFailure(request.isIdentity ? errSecItemNotFound : errSecParam) }
        let deleted = try SecItemKeychain.withKeychain { keychain in
            try request.queries(returnData: false, returnAttributes: false).reduce(0) { count, query in
                var query = query
                query.limit = .all
                return try count + SecItemCall.countingNotFoundAsZero { try keychain.delete(query) }
            }
        }
        guard deleted > 0 else { throw SecItemFailure(errSecItemNotFound) }
    }
}

/// What the four functions share: turning failures into statuses, and results into Apple's shapes.
enum SecItemCall {
    static func run(_ body: () throws -> Void) -> OSStatus {
        do {
            try body()
            return errSecSuccess
        } catch let failure as SecItemFailure {
            return failure.status
        } catch {
            return errSecInternalComponent
        }
    }

    static func countingNotFoundAsZero(_ body: () throws -> Int) throws -> Int {
        do {
            return try body()
        } catch let error as APIError where error.code == .itemNotFound {
            return 0
        }
    }

    /// The matches of `request`, shaped as Apple returns them; nil when nothing was asked for.
    /// - Throws: `errSecItemNotFound` when nothing matches.
    static func copy(_ request: SecItemRequest) throws -> CFTypeRef? {
        let wantsAttributes = request.returnAttributes
        // The most common call — one item's data — takes TresorKit's lookup route, which
        // answers the secret alone, without JSON either way.
        if request.returnData, !wantsAttributes, !request.returnPersistentReference, request.limit == .one {
            let queries = request.queries(returnData: true, returnAttributes: false)
            if queries.count == 1 {
                return try SecItemKeychain.withKeychain { keychain in
                    do {
                        return try keychain.secret(queries[0]) as NSData
                    } catch let error as APIError where error.code == .itemNotFound {
                        throw SecItemFailure(errSecItemNotFound)
                    }
                }
            }
        }
        let items = try SecItemKeychain.withKeychain { keychain in
            try request.queries(returnData: request.returnData, returnAttributes: wantsAttributes).flatMap { query in
                try countingNotFoundAsEmpty { try keychain.items(query) }
            }
        }
        let limited: ArraySlice<KeychainItem>
        switch request.limit {
        case .one: limited = items.prefix(1)
        case .all: limited = items[...]
        case .count(let count): limited = items.prefix(count)
        }
        guard !limited.isEmpty else { throw SecItemFailure(errSecItemNotFound) }
        let values = limited.compactMap { SecItemResult.value(of: $0, for: request) }
        guard !values.isEmpty else { return nil }
        return request.limit == .one ? values[0] : NSArray(array: values)
    }

    private static func countingNotFoundAsEmpty(_ body: () throws -> [KeychainItem]) throws -> [KeychainItem] {
        do {
            return try body()
        } catch let error as APIError where error.code == .itemNotFound {
            return []
        }
    }
}
