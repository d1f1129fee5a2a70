import FoundationEssentials
import Synchronization
import TresorKeychain
import TresorSystem

/// The collections' labels: a client may rename a collection (`Label` is read-write in the
/// specification, and clients such as Seahorse set it). Kept in a small file of the home so a
/// name the user chose survives restarts; without a file (tests of the provider alone), in memory.
final class CollectionLabels: Sendable {
    /// The label of each collection until a client renames it.
    static let defaults = [CollectionName.login: "Login", CollectionName.session: "Session"]

    private let file: URL?
    private let labels: Mutex<[String: String]>

    /// - Parameter file: where the labels are kept (`TresorPaths.secretServiceCollections`);
    ///   an unreadable or damaged file gives the default labels (a label is not worth refusing
    ///   to serve secrets for).
    init(file: URL?) {
        self.file = file
        let saved = file.flatMap { try? Data(contentsOf: $0) }.flatMap { try? JSONDecoder().decode([String: String].self, from: $0) } ?? [:]
        labels = Mutex(Self.defaults.merging(saved.filter { Self.defaults[$0.key] != nil }) { _, saved in saved })
    }

    /// The label of collection `name`.
    func label(of name: String) -> String {
        labels.withLock { $0[name] } ?? name
    }

    /// Renames collection `name`, durably before it answers.
    /// - Throws: `KeychainError.param` for a label over ``SecretLimits/labelBytes``; the file's
    ///   error when it cannot be written (the label is then unchanged).
    func rename(_ name: String, to label: String) throws {
        try SecretLimits.check(label: label, attributes: nil)
        try labels.withLock { labels in
            var changed = labels
            changed[name] = label
            if let file {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                try SecureFiles.writeAtomically(try encoder.encode(changed), to: file)
            }
            labels = changed
        }
    }
}
