import TresorModel

extension AppleNotesLibrary {
    /// The library as Tresor imports it: every note an import record (unlocked notes as text,
    /// locked ones with Apple's crypto fields as they are) in a folder named by its path in
    /// Apple Notes ("Personal/Recipes" for a folder nested in another) — or, for a note in
    /// Apple's Recently Deleted, bound for Tresor's — and one line for each note that could
    /// not be read.
    public var importReading: AppleNotesReading {
        let places = FolderPlaces(folders)
        let records = notes.map { note in
            let content: NoteImport.Content
            switch note.content {
            case .text(let text): content = .text(text)
            case .locked(let locked): content = .appleLocked(locked)
            }
            let place = note.folderID.map(places.place(of:)) ?? .folder(nil)
            return NoteImport(
                title: note.title, folder: place.folder, created: note.created, modified: note.modified, content: content,
                isPinned: note.isPinned, inRecentlyDeleted: place == .recentlyDeleted)
        }
        return AppleNotesReading(
            notes: records, unreadable: skipped.map { "note \($0.id) in the Apple database: \($0.reason)" },
            unreadWriteAheadLog: unreadWriteAheadLog)
    }
}

/// Where a note of each Apple folder goes in Tresor, whose folders are not nested: a folder's
/// path of titles from the top of its account, or Recently Deleted for Apple's and every folder
/// in it (a deleted folder goes there with its notes).
private struct FolderPlaces {
    enum Place: Equatable {
        case folder(String?)
        case recentlyDeleted

        var folder: String? {
            guard case .folder(let name) = self else { return nil }
            return name
        }
    }

    let folders: [Int64: AppleFolder]

    init(_ folders: [AppleFolder]) {
        self.folders = Dictionary(folders.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func place(of folderID: Int64) -> Place {
        var titles: [String] = []
        var seen: Set<Int64> = []
        var next: Int64? = folderID
        while let id = next, let folder = folders[id] {
            if folder.isRecentlyDeleted { return .recentlyDeleted }
            // A loop of parents (a damaged database) names no path: the folder keeps its own title.
            guard seen.insert(id).inserted else { return Self.named(titles.first) }
            titles.append(folder.title)
            next = folder.parentID
        }
        let path = titles.reversed().filter { !$0.isEmpty }.joined(separator: "/")
        // A path longer than a folder name may be keeps the folder's own title.
        return Self.named(path.utf8.count <= NoteLimits.folderNameBytes ? path : titles.first)
    }

    private static func named(_ name: String?) -> Place {
        .folder(name.flatMap { $0.isEmpty ? nil : $0 })
    }
}
