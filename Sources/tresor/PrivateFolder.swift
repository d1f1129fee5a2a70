import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A fresh folder of this user's only (mode 0700, `mkdtemp`) in the first of some places that
/// lets one be made: where `note edit` keeps the text it hands the editor, where `backup create
/// --out -` keeps the backup on its way to standard output.
enum PrivateFolder {
    /// Makes `PREFIX-XXXXXX` in the first writable folder of `places`.
    /// - Parameters:
    ///   - prefix: the folder name's start, e.g. `tresor-note`.
    ///   - places: where to try, in order; nil entries (an unset variable) are passed over.
    /// - Returns: the folder's path, or nil when none of `places` took one.
    static func make(_ prefix: String, inFirstOf places: [String?]) -> String? {
        for base in places.compactMap({ $0 }) where access(base, W_OK | X_OK) == 0 {
            var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
            if let made = mkdtemp(&template) { return String(cString: made) }
        }
        return nil
    }
}
