import FoundationEssentials
import TresorModel
import TresorSystem

/// The notes calls an application or a server makes, without blocking a Swift concurrency
/// thread (each runs its blocking twin on a thread of its own). The user's own calls — lock
/// now, import, the passphrase reset, keychain unlock — are the CLI's and stay blocking.
extension Notes {
    /// ``list(folder:)`` without blocking a Swift concurrency thread.
    public func list(folder: String? = nil) async throws -> [NoteSummary] {
        try await offloaded { try self.list(folder: folder) }
    }

    /// ``create(title:body:folder:pinned:)`` without blocking a Swift concurrency thread.
    @discardableResult
    public func create(title: String, body: String, folder: String? = nil, pinned: Bool = false) async throws -> NoteSummary {
        try await offloaded { try self.create(title: title, body: body, folder: folder, pinned: pinned) }
    }

    /// ``show(_:passphrase:)`` without blocking a Swift concurrency thread.
    public func show(_ id: String, passphrase: String? = nil) async throws -> OpenedNote {
        try await offloaded { try self.show(id, passphrase: passphrase) }
    }

    /// ``delete(_:)`` without blocking a Swift concurrency thread.
    public func delete(_ id: String) async throws {
        try await offloaded { try self.delete(id) }
    }

    /// ``search(_:)`` without blocking a Swift concurrency thread.
    public func search(_ text: String) async throws -> [NoteSummary] {
        try await offloaded { try self.search(text) }
    }

    /// ``edit(_:title:body:pinned:folder:passphrase:)`` without blocking a Swift concurrency thread.
    @discardableResult
    public func edit(
        _ id: String, title: String? = nil, body: String? = nil, pinned: Bool? = nil, folder: String?? = nil, passphrase: String? = nil
    ) async throws -> NoteSummary {
        try await offloaded { try self.edit(id, title: title, body: body, pinned: pinned, folder: folder, passphrase: passphrase) }
    }

    /// ``folders()`` without blocking a Swift concurrency thread.
    public func folders() async throws -> [Folder] {
        try await offloaded { try self.folders() }
    }

    /// ``lock(_:passphrase:)`` without blocking a Swift concurrency thread.
    @discardableResult
    public func lock(_ id: String, passphrase: String? = nil) async throws -> NoteSummary {
        try await offloaded { try self.lock(id, passphrase: passphrase) }
    }

    /// ``removeLock(_:passphrase:)`` without blocking a Swift concurrency thread.
    @discardableResult
    public func removeLock(_ id: String, passphrase: String? = nil) async throws -> NoteSummary {
        try await offloaded { try self.removeLock(id, passphrase: passphrase) }
    }

    /// `openSession(note:passphrase:passcode:)` without blocking a Swift concurrency thread.
    public func openSession(note: String? = nil, passphrase: String? = nil, passcode: String? = nil) async throws {
        try await offloaded { try self.openSession(note: note, passphrase: passphrase, passcode: passcode) }
    }

    /// ``addAttachment(to:kind:name:file:)`` without blocking a Swift concurrency thread.
    public func addAttachment(to note: String, kind: AttachmentKind, name: String, file: URL) async throws -> AttachmentInfo {
        try await offloaded { try self.addAttachment(to: note, kind: kind, name: name, file: file) }
    }

    /// ``attachment(_:of:passphrase:)`` without blocking a Swift concurrency thread.
    public func attachment(_ id: String, of note: String, passphrase: String? = nil) async throws -> AttachmentData {
        try await offloaded { try self.attachment(id, of: note, passphrase: passphrase) }
    }

    /// ``readAttachment(_:of:passphrase:receive:)`` without blocking a Swift concurrency thread;
    /// `receive` is called on the thread that reads the answer.
    @discardableResult
    public func readAttachment(
        _ id: String, of note: String, passphrase: String? = nil, receive: @escaping @Sendable (Data) throws -> Void
    ) async throws -> ReceivedAttachment {
        try await offloaded { try self.readAttachment(id, of: note, passphrase: passphrase, receive: receive) }
    }

    /// ``passphraseStatus()`` without blocking a Swift concurrency thread.
    public func passphraseStatus() async throws -> NotesPassphraseStatus {
        try await offloaded { try self.passphraseStatus() }
    }
}
