import Foundation
import TresorModel

/// The dictionary conversion alone, without a daemon: what the fuzz target (Fuzz/, `secitem-dictionary`)
/// drives. Not part of the Security framework's surface, hence the SPI.
@_spi(Fuzzing) public enum SecItemDictionaryCheck {
    /// Which function's dictionary to read it as.
    public enum Purpose: CaseIterable, Sendable {
        case add, search, changes
    }

    /// Reads `dictionary` as the function of `purpose` would.
    /// - Parameters:
    ///   - dictionary: Any dictionary, as a caller might pass it.
    ///   - purpose: `SecItemAdd`'s attributes, a query, or `SecItemUpdate`'s changes.
    /// - Returns: `errSecSuccess` when it would be sent to the daemon, else the status the call answers.
    public static func status(of dictionary: NSDictionary, as purpose: Purpose) -> OSStatus {
        do {
            _ = try read(dictionary, as: purpose)
            return errSecSuccess
        } catch let failure as SecItemFailure {
            return failure.status
        } catch {
            return errSecInternalComponent
        }
    }

    /// Reads `dictionary`, writes what it read back as a result's attributes dictionary (through
    /// the same attribute table), and reads that again as a query.
    /// - Returns: nil when the dictionary is refused; else whether the second reading found the
    ///   same attributes as the first — which it must, for every accepted dictionary.
    public static func roundTripHolds(_ dictionary: NSDictionary, as purpose: Purpose) -> Bool? {
        guard let request = try? read(dictionary, as: purpose) else { return nil }
        let item = KeychainItem(id: "fuzz", itemClass: request.itemClass ?? .genericPassword, attributes: request.attributes, secret: nil)
        var written = SecItemResult.attributes(of: item, forms: request.blobForms)
        // A result always has the synchronizable flag and the access control object, which the
        // request may not have had.
        written.removeValue(forKey: kSecAttrAccessControl as String)
        if request.attributes.synchronizable == nil { written.removeValue(forKey: kSecAttrSynchronizable as String) }
        guard let again = try? SecItemRequest(NSDictionary(dictionary: written), purpose: .search) else { return false }
        var expected = request.attributes
        expected.accessControl = nil
        return again.attributes == expected && (request.itemClass == nil || again.itemClass == request.itemClass)
    }

    private static func read(_ dictionary: NSDictionary, as purpose: Purpose) throws -> SecItemRequest {
        let request: SecItemRequest
        switch purpose {
        case .add: request = try SecItemRequest(dictionary, purpose: .add)
        case .search: request = try SecItemRequest(dictionary, purpose: .search)
        case .changes: request = try SecItemRequest(dictionary, purpose: .changes)
        }
        if purpose == .search { try request.requireSearchableClass() }
        return request
    }
}
