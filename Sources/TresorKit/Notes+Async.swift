import FoundationEssentials
import TresorModel

/// The notes calls an application or a server makes most, without blocking a Swift concurrency
/// thread (each runs its blocking twin on a thread of its own).
extension Notes {
    /// ``list(folder:)`` without blocking a Swift concurrency thread.
    public func list(folder: String? = nil) async throws -> [NoteSummary] {
        try await BlockingCall.run { try self.list(folder: folder) }
    }

    /// ``create(title:body:folder:pinned:)`` without blocking a Swift concurrency thread.
    @discardableResult
    public func create(title: String, body: String, folder: String? = nil, pinned: Bool = false) async throws -> NoteSummary {
        try await BlockingCall.run { try self.create(title: title, body: body, folder: folder, pinned: pinned) }
    }

    /// ``show(_:passphrase:)`` without blocking a Swift concurrency thread.
    public func show(_ id: String, passphrase: String? = nil) async throws -> OpenedNote {
        try await BlockingCall.run { try self.show(id, passphrase: passphrase) }
    }

    /// ``delete(_:)`` without blocking a Swift concurrency thread.
    public func delete(_ id: String) async throws {
        try await BlockingCall.run { try self.delete(id) }
    }

    /// ``search(_:)`` without blocking a Swift concurrency thread.
    public func search(_ text: String) async throws -> [NoteSummary] {
        try await BlockingCall.run { try self.search(text) }
    }
}
