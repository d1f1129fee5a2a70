import Foundation
import Hummingbird
import TresorNotesDomain
import TresorProtocol

/// Folders and notes (docs/WEB.md): list, search, create, open, edit, delete. Every route
/// about one note first asks the store whether the session's account may see it, so another
/// account's note answers 404 exactly as a missing one. A locked note's body never passes
/// through here in the clear: the browser reads its `locked` record and saves it with
/// `PUT …/locked-body`.
struct WebNoteRoutes {
    let services: WebServices

    struct FolderRequest: Decodable {
        var name: String
    }

    struct CreateNoteRequest: Decodable {
        var title: String
        var body: String
        /// A folder's name (created when missing)…
        var folder: String?
        /// …or an existing folder's id.
        var folderID: String?
        var isPinned: Bool?
    }

    /// Absent fields stay as they are; `"folder": null` (or `"folderID": null`) moves the note
    /// out of its folder.
    /// `base` names the revision the new title and body were made from (with their text
    /// then, so a late edit can be merged: docs/WEB.md, "Revisions").
    struct EditNoteRequest: Decodable {
        var title: String?
        var body: String?
        var isPinned: Bool?
        var folder: String??
        var folderID: String??
        var base: NoteBase?

        enum CodingKeys: String, CodingKey { case title, body, isPinned, folder, folderID, base }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            body = try container.decodeIfPresent(String.self, forKey: .body)
            base = try container.decodeIfPresent(NoteBase.self, forKey: .base)
            isPinned = try container.decodeIfPresent(Bool.self, forKey: .isPinned)
            folder = container.contains(.folder) ? .some(try container.decodeIfPresent(String.self, forKey: .folder)) : nil
            folderID = container.contains(.folderID) ? .some(try container.decodeIfPresent(String.self, forKey: .folderID)) : nil
        }
    }

    func register(on router: Router<WebRequestContext>) {
        registerFolders(on: router)
        registerNotes(on: router)
    }

    private func registerFolders(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/folders") { _, context -> Response in
            let account = try context.requireSession().account
            return try WebCoding.response(try await services.perform("folders", context) { try await $0.folders(account: account.id) })
        }
        router.post("/api/folders") { request, context -> Response in
            let account = try context.requireSession().account
            let body = try await WebCoding.decode(FolderRequest.self, request)
            let folder = try await services.perform("folder create", context) { try await $0.createFolder(named: body.name, account: account.id) }
            return try WebCoding.response(folder, status: .created)
        }
        router.delete("/api/folders/:id") { _, context -> Response in
            let account = try context.requireSession().account
            let id = try context.parameters.require("id")
            // Deleting a folder keeps its notes: they move out of it first.
            try await services.perform("folder delete", context, id: id) { try await $0.deleteFolder(id: id, account: account.id) }
            return Response(status: .noContent)
        }
    }

    private func registerNotes(on router: Router<WebRequestContext>) {
        let services = self.services
        router.get("/api/notes") { request, context -> Response in
            let account = try context.requireSession().account
            let folderID = request.uri.queryParameters.get("folder").flatMap { $0.isEmpty ? nil : $0 }
            let search = request.uri.queryParameters.get("search").flatMap { $0.isEmpty ? nil : $0 }
            let list = try await services.perform("list", context) { store in
                try await Self.list(store, account: account, folderID: folderID, search: search)
            }
            return try WebCoding.response(list)
        }
        router.post("/api/notes") { request, context -> Response in
            let account = try context.requireSession().account
            let body = try await WebCoding.decode(CreateNoteRequest.self, request)
            let note = try await services.perform("create", context) { store in
                let folders = try await store.folders(account: account.id)
                let folder = try Self.folderName(name: body.folder, id: body.folderID, in: folders)
                let draft = NoteDraft(title: body.title, body: body.body, folder: folder, isPinned: body.isPinned ?? false)
                let created = try await store.createNote(
                    draft, account: account.id, quota: services.quota(for: account, adding: body.title.utf8.count + body.body.utf8.count))
                return WebNoteSummary(created, for: account, folders: try await store.folders(account: account.id))
            }
            context.logger.info("web: note created", metadata: ["id": "\(note.id)"])
            return try WebCoding.response(note, status: .created)
        }
        router.get("/api/notes/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            let detail = try await services.performOnNote("show", context, id: id, includingDeleted: true) { store, account, _ in
                try await Self.detail(store, id: id, account: account)
            }
            return try WebCoding.response(detail)
        }
        router.patch("/api/notes/:id") { request, context -> Response in
            let id = try context.parameters.require("id")
            let body = try await WebCoding.decode(EditNoteRequest.self, request)
            let note = try await services.performOnNote("edit", context, id: id) { store, account, access in
                let movesFolder = body.folder != nil || body.folderID != nil
                try access.checkEdit(pinning: body.isPinned != nil, movingFolder: movesFolder)
                if body.body != nil, try await store.summary(ofNote: id).isLocked {
                    throw APIError(.wrongLockState, "a locked note's body is saved sealed: PUT /api/notes/{id}/locked-body")
                }
                var folder: String?? = nil
                if movesFolder {
                    let folders = try await store.folders(account: account.id)
                    folder = .some(try Self.folderName(name: body.folder ?? nil, id: body.folderID ?? nil, in: folders))
                }
                let changes = NoteChanges(title: body.title, body: body.body, isPinned: body.isPinned, folder: folder, base: body.base)
                // An edit needs room for its new title and body (the old ones are not subtracted).
                let grows = access == .owner && (body.title != nil || body.body != nil)
                let quota = grows ? services.quota(for: account, adding: (body.title?.utf8.count ?? 0) + (body.body?.utf8.count ?? 0)) : nil
                let outcome = try await store.saveNote(id, changes, by: account.id, quota: quota)
                return WebSaveAnswer(outcome, for: account, folders: try await store.folders(account: account.id))
            }
            return try WebCoding.response(note)
        }
        router.delete("/api/notes/:id") { _, context -> Response in
            let id = try context.parameters.require("id")
            // To Recently Deleted (docs/WEB.md): restored with POST …/restore, gone for good
            // with DELETE /api/recently-deleted/{id} or after 30 days.
            try await services.performOnNote("delete", context, id: id, ownerOnly: true) { store, _, _ in try await store.moveToRecentlyDeleted(id) }
            return Response(status: .noContent)
        }
    }

    /// The account's notes and the notes shared with it (or one folder's, or those matching
    /// `search`), pinned first, then most recently modified (search: best match first).
    static func list(_ store: any WebStore, account: WebAccount, folderID: String?, search: String?) async throws -> WebNotesList {
        let folders = try await store.folders(account: account.id)
        var notes: [NoteSummary]
        let query = try search.map(SearchWords.query)
        if let search, let query {
            notes = try await store.search(search, account: account.id)
            notes += try await sharedNotes(matching: query, store, account: account)
        } else if let folderID {
            notes = try await store.notes(account: account.id, folderID: folderID)
        } else {
            notes = try await store.notes(account: account.id, folderID: nil) + store.notesShared(with: account.id)
        }
        let previews = try await store.previews(ofNotes: notes.map(\.id), matching: query ?? [])
        var listed = notes.map { note in
            var summary = WebNoteSummary(note, for: account, folders: folders)
            summary.preview = previews[note.id]
            return summary
        }
        // Pinned first — by this account's pins only: a participant's order says nothing of the owner's.
        if search == nil && folderID == nil { listed.sort { ($0.isPinned ? 1 : 0, $0.modified) > ($1.isPinned ? 1 : 0, $1.modified) } }
        return WebNotesList(notes: listed)
    }

    /// The notes other accounts share with `account` that `query` matches, by the search's own
    /// rule (``SearchWords``): they are in their owners' indexes, so their text is read here.
    /// A shared note is never locked.
    static func sharedNotes(matching query: [String], _ store: any WebStore, account: WebAccount) async throws -> [NoteSummary] {
        var matches: [NoteSummary] = []
        for note in try await store.notesShared(with: account.id) {
            let body = try await store.openNote(note.id).body
            let title = SearchWords.words(of: note.title)
            if SearchWords.score(of: query, title: title, body: SearchWords.words(of: body)) != nil { matches.append(note) }
        }
        return matches
    }

    /// One note for the browser: an unlocked note's body, or a locked note's record.
    static func detail(_ store: any WebStore, id: String, account: WebAccount) async throws -> WebNoteDetail {
        // Opened first: most notes are unlocked, and reading the summary apart as well was a
        // third of an open's statements on a server's database. The folders (for the folder's
        // id) are read only for a note in one.
        func folders(of summary: NoteSummary) async throws -> [Folder] {
            summary.folder == nil ? [] : try await store.folders(account: account.id)
        }
        for _ in 0..<2 {
            do {
                let opened = try await store.openNote(id)
                return WebNoteDetail(
                    summary: WebNoteSummary(opened.summary, for: account, folders: try await folders(of: opened.summary)), body: opened.body,
                    attachments: opened.attachments, locked: nil, share: opened.summary.sharing)
            } catch NotesError.wrongLockState {
                let summary = try await store.summary(ofNote: id)
                guard summary.isLocked else { continue }  // unlocked meanwhile: open it again
                return WebNoteDetail(
                    summary: WebNoteSummary(summary, for: account, folders: try await folders(of: summary)), body: nil,
                    attachments: try await store.listedAttachments(ofNote: id), locked: try await store.lockedRecord(ofNote: id), share: nil)
            }
        }
        throw NotesError.wrongLockState("note \(id.prefix(64)) was locked and unlocked while it was opened; open it again")
    }

    /// The folder a request names by name or by id (nil: none); an unknown id is 404.
    static func folderName(name: String?, id: String?, in folders: [Folder]) throws -> String? {
        if let name, id != nil, folders.first(where: { $0.id == id })?.name != name {
            throw APIError(.param, "give folder or folderID, not both")
        }
        if let name { return name }
        guard let id else { return nil }
        guard let folder = folders.first(where: { $0.id == id }) else { throw NotesError.notFound("folder \(id.prefix(64))") }
        return folder.name
    }
}
