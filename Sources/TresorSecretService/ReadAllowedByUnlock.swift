import FoundationEssentials

/// A client's last `SearchItems`: what it searched by, and the locked items it found.
struct ClientSearch {
    var attributes: [String: String]
    /// The paths of the items found locked.
    var locked: Set<String>
}

/// A generic client that waits on the locked keybag for its own items is asked about once: the
/// desktop's question to unlock names its read, and the passcode typed there unlocks the keybag
/// and allows that read (docs/SECRET-SERVICE.md, "Asking on the desktop"). While the keybag is
/// locked an item's label cannot be read: the read is named by the attributes the client found
/// the items by, which every one of them has.
extension SecretServiceProvider {
    /// The read the desktop's question to unlock for the prompt at `path` also allows, in words;
    /// nil when it only unlocks — the client is not a generic client the user must approve, the
    /// prompt names a collection rather than items, or the desktop asks already for another prompt.
    func readToAllow(withUnlockOf path: String) -> String? {
        guard let request = unlockRequests[path], request.client.needsApproval, let objects = prompts.objects(at: path),
            !objects.isEmpty, objects.allSatisfy({ if case .item? = SecretObjectPath($0) { true } else { false } })
        else { return nil }
        return Self.described(read: objects, foundBy: lastSearches[request.sender])
    }

    /// The items `objects` a client asks to read, in words: by the attributes `search` found them
    /// by, when it found them all — else by their number alone.
    static func described(read objects: [String], foundBy search: ClientSearch?) -> String {
        let count = objects.count == 1 ? "1 secret" : "\(objects.count) secrets"
        guard let search, !search.attributes.isEmpty, Set(objects).isSubset(of: search.locked) else { return "\(count) of its own" }
        let attributes = search.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        return "\(count) with \(attributes.prefix(300))"
    }

    /// The user allowed the read named in the desktop's question to unlock for the prompt at
    /// `path` (``readToAllow(withUnlockOf:)``), `allowed` once or for this session: it is approved
    /// as the keybag's unlock completes the prompt (``approveReadAllowedByUnlock(_:_:)``).
    func allowRead(of path: String, _ allowed: PresenceAnswer) {
        guard let request = unlockRequests[path] else { return }
        readsAllowedByUnlock.insert(path)
        remember(request.client, as: allowed)
    }

    /// Approves, for one read each, the items among `objects` that `request`'s generic client
    /// waited on only because the user must approve its reads (`needing`, what
    /// ``needingPresence(_:_:)`` found for it): the desktop's question to unlock allowed them.
    /// - Returns: the request as a client the user approved makes it, and what still needs the
    ///   user present for its own sake (`userPresence`), to be asked about.
    func approveReadAllowedByUnlock(
        _ needing: (paths: [String], ids: [String], description: String), of objects: [String], _ request: SecretRequest
    ) -> (SecretRequest, (paths: [String], ids: [String], description: String)) {
        var approved = request
        approved.client.needsApproval = false
        let ownSake = needingPresence(objects, approved)
        let until = Date().addingTimeInterval(Self.approvalLifetime)
        for id in needing.ids where !ownSake.ids.contains(id) {
            approvals[request.sender, default: [:]][id] = until
        }
        return (approved, ownSake)
    }
}
