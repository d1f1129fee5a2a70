import Foundation
import TresorNotes
import TresorNotesDomain
import TresorSystem

extension SQLiteWebStore: AttachmentStore {
    public func listedAttachments(ofNote id: String) async throws -> [AttachmentInfo] {
        try await run { try $0.listedAttachments(ofNote: id) }
    }

    public func beginAttachment(
        to noteID: String, kind: AttachmentKind, name: String, id: String?, created: Date?, excludedFromBackup: Bool
    ) async throws -> any AttachmentWriter {
        try await run { store in
            guard try !store.summary(ofNote: noteID).isLocked else {
                throw NotesError.wrongLockState("attachments are added to unlocked notes in the web client")
            }
            return SQLiteAttachmentWriter(
                upload: try store.beginAttachment(
                    to: noteID, kind: kind, name: name, excludedFromBackup: excludedFromBackup, id: id, created: created),
                owner: try self.owner(of: noteID, store),
                store: store, within: { quota, account, adding, write in try self.within(quota, account: account, store, adding: adding, write) })
        }
    }

    public func readAttachment(_ id: String, of noteID: String) async throws -> any AttachmentReader {
        try await run { store -> any AttachmentReader in
            if try store.summary(ofNote: noteID).isLocked {
                return ChunkedAttachmentReader(chunks: try store.openSealedChunks(ofAttachment: id, note: noteID))
            }
            return ChunkedAttachmentReader(chunks: try store.openAttachment(id, of: noteID).1)
        }
    }

    public func removeAttachment(_ id: String, of noteID: String, by authority: AttachmentRemovalAuthority) async throws {
        try await run { try $0.removeAttachment(id, of: noteID, by: authority) }
    }

    public func setExcludedFromBackup(_ id: String, of noteID: String, excluded: Bool) async throws -> AttachmentInfo {
        try await run { try $0.setExcludedFromBackup(id, of: noteID, excluded: excluded) }
    }
}

/// An upload into the home's attachments folder (``AttachmentUpload``): each chunk sealed and
/// written as it arrives.
final class SQLiteAttachmentWriter: AttachmentWriter {
    typealias Within = @Sendable (StorageQuota?, AccountID, Int?, () throws -> AttachmentInfo) throws -> AttachmentInfo

    private let upload: AttachmentUpload
    private let owner: AccountID
    private let within: Within

    init(upload: AttachmentUpload, owner: AccountID, store: NotesStore, within: @escaping Within) {
        self.upload = upload
        self.owner = owner
        self.within = within
    }

    func append(_ data: Data) async throws {
        let upload = self.upload
        try await offloaded { try upload.append(data) }
    }

    func finish(quota: StorageQuota?) async throws -> AttachmentInfo {
        let upload = self.upload, owner = self.owner, within = self.within
        do {
            return try await offloaded { try within(quota, owner, upload.byteCount) { try upload.finish() } }
        } catch {
            upload.abandon()
            throw error
        }
    }

    func abandon() async {
        upload.abandon()
    }
}

/// An attachment from the home's attachments folder — an unlocked note's plaintext, a locked
/// one's sealed chunks —, each chunk read from its file and opened when asked for.
final class ChunkedAttachmentReader: AttachmentReader {
    private let chunks: AttachmentChunks
    var byteCount: Int { chunks.byteCount }

    init(chunks: AttachmentChunks) {
        self.chunks = chunks
    }

    func next() async throws -> Data? {
        let chunks = self.chunks
        return try await offloaded { try chunks.next() }
    }
}
