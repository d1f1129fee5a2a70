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
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return SecItemCall.run {
        let request = try SecItemRequest(attributes, purpose: .add)
        guard let itemClass = request.itemClass else { throw SecItemFailure(errSecParam) }
        try request.requireSearchableClass()
        let added = try SecItemKeychain.withKeychain { keychain in
            try keychain.add(itemClass, attributes: request.attributes, secret: request.secret ?? Data())
        }
        guard request.returnsValues else { return }
        var lookup = request
        lookup.id = added.id
        lookup.limit = .one
        let found = try SecItemCall.copy(lookup)
        result?.pointee = found
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
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    result?.pointee = nil
    return SecItemCall.run {
        let request = try SecItemCall.classFound(for: SecItemRequest(query, purpose: .search))
        try request.requireSearchableClass()
        // Not `result?.pointee = try …`: with a nil `result` that would skip the search itself,
        // and an existence check (`SecItemCopyMatching(query, nil)`) would always succeed.
        let found = try SecItemCall.copy(request)
        result?.pointee = found
    }
}

/// Changes the matching items, as `SecItemUpdate` does on Apple platforms.
/// - Parameters:
///   - query: `kSecClass` and the attributes the items to change must have; no `kSecReturn…`
///     key (`errSecParam`, as on Apple platforms).
///   - attributesToUpdate: The attributes to set, and `kSecValueData` for a new secret.
/// - Returns: `errSecSuccess`, or `errSecItemNotFound` when nothing matches,
///   `errSecDuplicateItem` when a change would make two items alike, `errSecParam`…
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemCall.run {
        let request = try SecItemCall.classFound(for: SecItemRequest(query, purpose: .search))
        // As Apple's: an update returns only a status, so its query asks for nothing back.
        guard !request.returnsValues && !request.returnReference else {
            throw SecItemFailure(errSecParam, detail: "SecItemUpdate's query takes no kSecReturn… key: it returns only a status")
        }
        let changes = try SecItemRequest(attributesToUpdate, purpose: .changes)
        try request.requireSearchableClass()
        // Not asking the user means not changing what only the user may change.
        if request.authenticationUI == .fail, try SecItemCall.anyMatchNeedsTheUser(request) {
            throw SecItemFailure(errSecInteractionNotAllowed)
        }
        try SecItemCall.everyMatch(of: request) { keychain, query in
            try keychain.update(query, secret: changes.secret, changes: changes.attributes)
        }
    }
}

/// Deletes every matching item, as `SecItemDelete` does on Apple platforms.
/// - Parameter query: `kSecClass` and the attributes the items to delete must have; no
///   `kSecMatchLimit` other than `kSecMatchLimitAll` (`errSecParam`, as on Apple platforms).
/// - Returns: `errSecSuccess`, or `errSecItemNotFound` when nothing matches, `errSecParam`…
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemCall.run {
        let request = try SecItemCall.classFound(for: SecItemRequest(query, purpose: .search))
        // As Apple's: a delete removes every match, and a limit would leave some behind unsaid.
        guard !request.limitGiven || request.limit == .all else {
            throw SecItemFailure(errSecParam, detail: "SecItemDelete takes no kSecMatchLimit but kSecMatchLimitAll: it deletes every match")
        }
        try request.requireSearchableClass()
        try SecItemCall.everyMatch(of: request) { keychain, query in try keychain.delete(query) }
    }
}

/// What the four functions share: turning failures into statuses, and results into Apple's shapes.
enum SecItemCall {
    static func run(_ body: () throws -> Void) -> OSStatus {
        do {
            try body()
            LastSecItemFailure.record(nil)
            return errSecSuccess
        } catch let failure as SecItemFailure {
            LastSecItemFailure.record(failure)
            return failure.status
        } catch {
            LastSecItemFailure.record(nil)
            return errSecInternalComponent
        }
    }

    /// Runs `change` (an update or a delete) on every item `request` matches, one query per
    /// synchronizable variant it stands for.
    /// - Throws: `errSecItemNotFound` when it changed nothing, as Apple's functions do.
    static func everyMatch(of request: SecItemRequest, _ change: (Keychain, ItemQuery) throws -> Int) throws {
        let changed = try SecItemKeychain.withKeychain { keychain in
            try request.queries(returnData: false, returnAttributes: false).reduce(0) { count, query in
                var query = query
                query.limit = .all
                return try count + treatingNotFound(as: 0) { try change(keychain, query) }
            }
        }
        guard changed > 0 else { throw SecItemFailure(errSecItemNotFound) }
    }

    /// `request` with its class, when it names an item by its persistent reference alone, as
    /// Apple's do (their reference says the class): the class whose item has that id.
    /// - Throws: `errSecItemNotFound` when no item has it.
    static func classFound(for request: SecItemRequest) throws -> SecItemRequest {
        guard request.itemClass == nil, !request.isIdentity, request.id != nil else { return request }
        for itemClass in ItemClass.allCases {
            var probe = request
            probe.itemClass = itemClass
            probe.limit = .one
            if try !fetch(probe, returnData: false, returnAttributes: false).isEmpty {
                probe.limit = request.limit
                return probe
            }
        }
        throw SecItemFailure(errSecItemNotFound)
    }

    /// Whether a match of `request` has a secret only the user's presence opens.
    static func anyMatchNeedsTheUser(_ request: SecItemRequest) throws -> Bool {
        var all = request
        all.limit = .all
        return try fetch(all, returnData: false, returnAttributes: true).contains(where: needsTheUser)
    }

    /// Whether `item`'s secret opens only with the user's presence (its attributes say).
    private static func needsTheUser(_ item: KeychainItem) -> Bool {
        item.attributes?.accessControl != nil
    }

    /// The matches of `request`, shaped as Apple returns them; nil when nothing was asked for.
    /// - Throws: `errSecItemNotFound` when nothing matches; `errSecInteractionNotAllowed` when
    ///   a match's secret needs the user and `kSecUseAuthenticationUIFail` says not to ask.
    static func copy(_ request: SecItemRequest) throws -> CFTypeRef? {
        if request.returnData && request.authenticationUI != .allow { return try copyWithoutAsking(request) }
        // The most common call — one item's data — takes TresorKit's lookup route, which
        // answers the secret alone, without JSON either way.
        if request.returnData, !request.returnAttributes, !request.returnPersistentReference, request.limit == .one,
            let query = request.onlyQuery(returnData: true, returnAttributes: false)
        {
            return try SecItemKeychain.withKeychain { keychain in try keychain.secret(query) as NSData }
        }
        return try shaped(limited(fetch(request, returnData: request.returnData, returnAttributes: request.returnAttributes), request), request)
    }

    /// `copy` for `kSecUseAuthenticationUIFail` and `…Skip`: the matches' attributes first, to
    /// see which secrets need the user before asking for any (asking could wait for an approval).
    private static func copyWithoutAsking(_ request: SecItemRequest) throws -> CFTypeRef? {
        let candidates = try fetch(request, returnData: false, returnAttributes: true)
        if request.authenticationUI == .fail {
            guard !limited(candidates, request).contains(where: needsTheUser) else { throw SecItemFailure(errSecInteractionNotAllowed) }
            return try shaped(limited(fetch(request, returnData: true, returnAttributes: request.returnAttributes), request), request)
        }
        let items = try limited(candidates.filter { !needsTheUser($0) }, request).flatMap { candidate in
            var one = request
            one.id = candidate.id
            one.limit = .one
            return try fetch(one, returnData: true, returnAttributes: request.returnAttributes)
        }
        return try shaped(items[...], request)
    }

    /// Every item `request` matches, over its synchronizable variants.
    private static func fetch(_ request: SecItemRequest, returnData: Bool, returnAttributes: Bool) throws -> [KeychainItem] {
        try SecItemKeychain.withKeychain { keychain in
            try request.queries(returnData: returnData, returnAttributes: returnAttributes).flatMap { query in
                try treatingNotFound(as: []) { try keychain.items(query) }
            }
        }
    }

    private static func limited(_ items: [KeychainItem], _ request: SecItemRequest) -> ArraySlice<KeychainItem> {
        switch request.limit {
        case .one: items.prefix(1)
        case .all: items[...]
        case .count(let count): items.prefix(count)
        }
    }

    /// - Throws: `errSecItemNotFound` when `items` is empty.
    private static func shaped(_ items: ArraySlice<KeychainItem>, _ request: SecItemRequest) throws -> CFTypeRef? {
        guard !items.isEmpty else { throw SecItemFailure(errSecItemNotFound) }
        let values = items.compactMap { SecItemResult.value(of: $0, for: request) }
        guard !values.isEmpty else { return nil }
        return request.limit == .one ? values[0] : NSArray(array: values)
    }

    /// `body`'s answer, or `none` when the daemon found nothing: one query of several may match
    /// nothing while another does.
    private static func treatingNotFound<T>(as none: T, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as APIError where error.code == .itemNotFound {
            return none
        }
    }
}
