import Foundation
import Hummingbird
import TresorKeychain
import TresorProtocol
import TresorSecretService

extension SecretServiceRoutes {
    /// Copies items another provider handed over into the login keychain, each kept as the
    /// Secret Service's `CreateItem` keeps one (``SecretServiceItems``), in the group of the
    /// executable at `ownerPath` — or ``ExecutableGroup/imported``, which no executable sees
    /// until the user allows one. An item that group already holds with the same label,
    /// attribute map and secret is skipped, so importing twice changes nothing.
    /// - Parameter body: the items, and whose group they go to.
    /// - Returns: what was copied and what was skipped, and why.
    /// - Throws: `param` for too many items or an owner that cannot be read; the keychain's
    ///   errors that concern every item (locked, damaged). An item the keychain refuses alone
    ///   (over a limit) is skipped with the reason.
    func importItems(_ body: SecretServiceImportRequest) throws -> SecretServiceImportResponse {
        guard body.items.count <= SecretServiceImportRequest.maximumItems else {
            throw KeychainError.param("at most \(SecretServiceImportRequest.maximumItems) items per request")
        }
        let group = try body.ownerPath.map { try self.group(ofExecutable: $0) } ?? ExecutableGroup.imported
        // The group's own caller: it reads that group's secrets (to find earlier copies)
        // without the passcode the request has already proved, and adds there.
        let caller = Caller(accessGroups: [group], defaultAccessGroup: group)
        let keychain = try keychains.loginKeychain()
        var response = SecretServiceImportResponse(group: group, copied: [], skipped: [])
        for item in body.items {
            do {
                if try SecretServiceItems.contains(
                    label: item.label, attributes: item.attributes, secret: item.secret, in: keychain, caller: caller)
                {
                    response.skipped.append(SecretServiceSkip(what: item.displayName, why: "already in Tresor"))
                    continue
                }
                let added = try SecretServiceItems.add(
                    label: item.label, attributes: item.attributes, secret: item.secret, contentType: item.contentType,
                    dates: item.created.map { ($0, item.modified ?? $0) }, to: keychain, caller: caller)
                response.copied.append(.init(what: item.displayName, id: added.id))
            } catch let error as KeychainError where Self.concernsOneItem(error) {
                response.skipped.append(SecretServiceSkip(what: item.displayName, why: error.description))
            }
        }
        return response
    }

    /// Whether the keychain refused this item alone (its size, its attributes), not the
    /// import (a locked keybag, damaged storage).
    private static func concernsOneItem(_ error: KeychainError) -> Bool {
        switch error {
        case .param, .duplicateItem: true
        default: false
        }
    }
}

extension SecretServiceImportResponse: ResponseEncodable {}
