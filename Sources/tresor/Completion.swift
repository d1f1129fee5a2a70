import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorSystem

/// Candidates for shell completion (`tresor --generate-completion-script bash|zsh|fish`),
/// asked of the daemon already running for the home the command line names — never one
/// started for it, and never with a prompt. Note titles are offered as the description of
/// their id (zsh, fish), never as a value to type: a title on the command line is shown to
/// every local user by `ps`.
enum Completion {
    /// Note ids, each described by its title where the shell shows descriptions.
    static let notes = CompletionKind.custom { words, _, prefix in
        candidates(words) { client in
            try Notes(client: client).list().filter { $0.id.hasPrefix(prefix) }.map { described($0.id, $0.title) }
        }
    }

    /// Keychain names.
    static let keychains = CompletionKind.custom { words, _, prefix in
        candidates(words) { client in try client.keychains().map(\.name).filter { $0.hasPrefix(prefix) } }
    }

    /// The services of generic passwords.
    static let services = CompletionKind.custom { words, _, prefix in
        candidates(words) { client in
            let items = try Keychain(client: client).items(
                ItemQuery(.genericPassword, attributes: ItemAttributes(), limit: .all, returnAttributes: true))
            return Set(items.compactMap { $0.attributes?.service }).filter { $0.hasPrefix(prefix) }.sorted()
        }
    }

    /// Registered applications' ids.
    static let applications = CompletionKind.custom { words, _, prefix in
        candidates(words) { client in try client.applications().map(\.applicationID).filter { $0.hasPrefix(prefix) } }
    }

    /// What `body` finds through the home's running daemon; nothing when there is none or it
    /// refuses (a locked keybag).
    private static func candidates(_ words: [String], _ body: (TresorClient) throws -> [String]) -> [String] {
        guard let client = try? TresorClient.connect(paths: TresorPaths(home: home(in: words)), startDaemon: false, timeout: .seconds(2)) else {
            return []
        }
        return (try? body(client)) ?? []
    }

    /// swift-argument-parser's fish script, made to work with fish 3 too (Debian 12 ships
    /// 3.6): there `commandline -o -tC` fails instead of giving the cursor's place in the
    /// word, and the empty word it inserts must be empty, not two quotes (fish 4 passes raw,
    /// quoted words, which swift-argument-parser unquotes).
    static var fishScript: String {
        let shims = """
            function __tresor_cursor_in_token
                if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
                    commandline --tokens-raw -tC
                else
                    set -l token (commandline -ct)
                    string length -- "$token"
                end
            end

            function __tresor_empty_token
                if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
                    echo \\'\\'
                else
                    echo ''
                end
            end


            """
        return shims
            + Tresor.completionScript(for: .fish)
            .replacing("(__tresor_tokens -tC)", with: "(__tresor_cursor_in_token)")
            .replacing("$tokens[..$index] \\'\\' $tokens", with: "$tokens[..$index] (__tresor_empty_token) $tokens")
    }

    /// The value of `--home` among the words of the command line, if given.
    static func home(in words: [String]) -> String? {
        for (index, word) in words.enumerated() {
            if word.hasPrefix("--home=") { return String(word.dropFirst(7)) }
            if word == "--home", index + 1 < words.count { return words[index + 1] }
        }
        return nil
    }

    /// `value` with `description` where the asking shell shows one.
    private static func described(_ value: String, _ description: String) -> String {
        let line = description.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        switch CompletionShell.requesting {
        case .zsh?: return value.replacing(":", with: "\\:") + ":" + line
        case .fish?: return value + "\t" + line
        default: return value
        }
    }
}
