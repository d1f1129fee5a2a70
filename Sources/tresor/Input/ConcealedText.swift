import FoundationEssentials
import Synchronization
import TresorProtocol

/// What this command read off the terminal or standard input because it is confidential — a
/// title, a folder's name, a label given as `-` — and so never echoes in an error either: the
/// daemon's message naming it in quotes (`folder "Work" holds 1 note`) says "(the name given)"
/// instead, on the terminal and in `--json` alike (docs/CLI.md).
enum ConcealedText {
    private static let texts = Mutex<[String]>([])
    static let placeholder = "(the name given)"

    /// Conceals `text` from this command's error messages.
    static func add(_ text: String) {
        guard !text.isEmpty else { return }
        texts.withLock { $0.append(text) }
    }

    /// `error`, its message rid of every concealed text in quotes.
    static func concealed(in error: any Error) -> any Error {
        guard var apiError = error as? APIError else { return error }
        let concealed = texts.withLock { $0 }
        guard !concealed.isEmpty else { return error }
        for text in concealed {
            for quoted in ["\"\(text)\"", "'\(text)'", "“\(text)”"] { apiError.message = apiError.message.replacing(quoted, with: placeholder) }
        }
        return apiError
    }
}
