import Foundation
import Hummingbird
import TresorKeybag
import TresorNotes
import TresorProtocol

/// Notes, folders, search, locking and secure sessions (docs/API.md, "Notes", "Locked notes and
/// secure sessions"). The `tresor` CLI, and applications with their team's notes group
/// (``NotesRouting/scope(_:)``; docs/API.md, "Notes for applications").
struct NoteRoutes {
    let routing: NotesRouting

    func register(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesList)) { request, context -> NotesResponse in
            let body = try await routing.decodeOptional(ListNotesRequest.self, request, context, default: ListNotesRequest())
            return try await routing.perform("list", context) { NotesResponse(notes: try $0.notes(account: $1, folder: body.folder)) }
        }
        router.post(RouterPath(Route.notesCreate)) { request, context -> NoteSummary in
            let body = try await request.decode(as: CreateNoteRequest.self, context: context)
            let draft = NoteDraft(title: body.title, body: body.body, folder: body.folder, isPinned: body.pinned ?? false)
            let note = try await routing.perform("create", context) { try $0.createNote(draft, account: $1) }
            context.logger.info("notes: created", metadata: ["id": "\(note.id)"])
            return note
        }
        router.post(RouterPath(Route.notesShow)) { request, context -> OpenedNote in
            var decoded = try await request.decode(as: NoteRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("show", context, id: body.id) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, includingDeleted: true)
                return try store.openNote(body.id, passphrase: passphrase)
            }
        }
        router.post(RouterPath(Route.notesEdit)) { request, context -> NoteSaveOutcome in
            var decoded = try await request.decode(as: EditNoteRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            if body.folder != nil && body.removeFromFolder == true {
                throw APIError(.param, "give folder or removeFromFolder, not both")
            }
            let folder: String?? = body.removeFromFolder == true ? .some(nil) : body.folder.map { .some($0) }
            let changes = NoteChanges(title: body.title, body: body.body, isPinned: body.pinned, folder: folder, base: body.base)
            return try await routing.perform("edit", context, id: body.id) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account)
                    .checkEdit(pinning: changes.isPinned != nil, movingFolder: changes.folder != nil)
                return try store.saveNote(body.id, changes, passphrase: passphrase, by: account)
            }
        }
        router.post(RouterPath(Route.notesDelete)) { request, context -> Response in
            let body = try await request.decode(as: NoteRequest.self, context: context)
            try await routing.perform("delete", context, id: body.id, keychainUnlock: false) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true)
                try store.moveToRecentlyDeleted(body.id)
            }
            return Response(status: .noContent)
        }
        RecentlyDeletedRoutes(routing: routing).register(on: router)
        router.post(RouterPath(Route.notesSearch)) { request, context -> NotesResponse in
            let body = try await request.decode(as: SearchNotesRequest.self, context: context)
            return try await routing.perform("search", context) { NotesResponse(notes: try $0.search(body.text, account: $1)) }
        }
        registerFolders(on: router)
        registerLocking(on: router)
    }

    private func registerFolders(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesFolders)) { _, context -> FoldersResponse in
            try await routing.perform("folders", context) { FoldersResponse(folders: try $0.folders(account: $1)) }
        }
        router.post(RouterPath(Route.notesCreateFolder)) { request, context -> Folder in
            let body = try await request.decode(as: FolderRequest.self, context: context)
            let folder = try await routing.perform("folder create", context) { try $0.createFolder(named: body.name, account: $1) }
            context.logger.info("notes: folder created", metadata: ["id": "\(folder.id)"])
            return folder
        }
        router.post(RouterPath(Route.notesDeleteFolder)) { request, context -> FoldersResponse in
            let body = try await request.decode(as: FolderRequest.self, context: context)
            return try await routing.perform("folder delete", context) { store, account in
                try store.deleteFolder(named: body.name, account: account)
                return FoldersResponse(folders: try store.folders(account: account))
            }
        }
    }

    private func registerLocking(on router: Router<DaemonRequestContext>) {
        let routing = self.routing
        router.post(RouterPath(Route.notesLock)) { request, context -> NoteSummary in
            var decoded = try await request.decode(as: NoteRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("lock", context, id: body.id) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true)
                try store.lockNote(body.id, passphrase: passphrase)
                return try store.summary(ofNote: body.id)
            }
        }
        router.post(RouterPath(Route.notesRemoveLock)) { request, context -> NoteSummary in
            var decoded = try await request.decode(as: NoteRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase)
            let body = decoded
            return try await routing.perform("remove lock", context, id: body.id) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true)
                try store.removeLock(body.id, passphrase: passphrase)
                return try store.summary(ofNote: body.id)
            }
        }
        router.post(RouterPath(Route.notesRewrap)) { request, context -> NoteSummary in
            var decoded = try await request.decode(as: RewrapNoteRequest.self, context: context)
            let passphrase = try Passphrase.taking(&decoded.passphrase), current = try Passphrase.taking(&decoded.currentPassphrase)
            let body = decoded
            return try await routing.perform("rewrap", context, id: body.id) { store, account in
                try NotesRouting.checkAccess(store, note: body.id, for: account, ownerOnly: true)
                try store.rewrap(body.id, passphrase: passphrase, currentPassphrase: current)
                return try store.summary(ofNote: body.id)
            }
        }
        router.post(RouterPath(Route.notesLockNow)) { _, context -> LockNowResponse in
            let ended = try routing.store(context).lockNow()
            context.logger.notice("notes: lock now", metadata: ["endedSessions": "\(ended)"])
            return LockNowResponse(endedSessions: ended)
        }
        router.post(RouterPath(Route.notesSession)) { request, context -> Response in
            var body = try await request.decode(as: OpenSessionRequest.self, context: context)
            let passphrase = try Passphrase.taking(&body.passphrase), passcode = try Passcode.taking(&body.passcode)
            try await openSession(note: body.note, passphrase: passphrase, passcode: passcode, context)
            return Response(status: .noContent)
        }
    }

    /// `notes/session`: with the passcode, through the key kept in the keychain (user
    /// presence); with a passphrase, for note `note`'s passphrase or the current one; with
    /// neither, only through the keychain without user presence (or an open session).
    private func openSession(note: String?, passphrase: Passphrase?, passcode: Passcode?, _ context: DaemonRequestContext) async throws {
        let routing = self.routing
        if let passcode {
            guard passphrase == nil else { throw APIError(.param, "give passphrase or passcode, not both") }
            try await routing.perform("session (keychain)", context, id: note, keychainUnlock: false, cliOnly: true) { store, account in
                guard try store.passphraseStatus().keychainUnlock,
                    let key = try routing.keychainKey.read(account: .local, passcode: passcode)
                else { throw APIError(.notFound, "no notes passphrase key is kept in the keychain (tresor note passphrase keychain on)") }
                guard try store.openSession(with: key) else {
                    throw APIError(.notFound, "the key kept in the keychain is not the current passphrase's; turn keychain unlock off and on again")
                }
                if let note {
                    try NotesRouting.checkAccess(store, note: note, for: account)
                    _ = try store.openNote(note)
                }
            }
        } else if let note {
            try await routing.perform("session", context, id: note) { store, account in
                try NotesRouting.checkAccess(store, note: note, for: account)
                _ = try store.openNote(note, passphrase: passphrase)
            }
        } else {
            guard let passphrase else { throw APIError(.param, "give passphrase, passcode or note") }
            try await routing.perform("session", context, keychainUnlock: false) { try $0.openCurrentSession(with: passphrase, account: $1) }
        }
    }
}
