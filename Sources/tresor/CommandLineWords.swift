import ArgumentParser
import TresorModel

/// What the command line holds before swift-argument-parser reads it: global options moved
/// behind the command's name, and command names checked.
enum CommandLineWords {
    /// The first argument (1 for the word after `tresor`) that is not UTF-8, or nil. Read as a
    /// `String`, its bytes would become U+FFFD: two different names would be one.
    static func firstNotUTF8() -> Int? {
        (1..<Int(CommandLine.argc)).first { index in
            CommandLine.unsafeArgv[index].map { String(validatingCString: $0) == nil } ?? false
        }
    }

    /// Whether `name` is an option every command takes (``GlobalOptions``), and if so whether
    /// it takes a value. (A switch, not a dictionary: building one cost every process 0.3 M
    /// instructions, BENCHMARKS.md, "One `tresor item get` process".)
    static func globalOption(_ name: String) -> (takesValue: Bool, Void)? {
        switch name {
        case "--home": return (true, ())
        case "--json", "--verbose": return (false, ())
        default: return nil
        }
    }

    /// `arguments` with the global options that come before or between command names
    /// (`tresor --json item --home H get …`) moved behind them, so that the command that
    /// takes them receives them: `tresor item get … --json --home H`.
    /// - Parameter arguments: the command line without the program's name.
    /// - Returns: the same words, rearranged; unchanged when nothing is to move.
    static func arranged(_ arguments: [String]) -> [String] {
        var command: any ParsableCommand.Type = Tresor.self
        var names: [String] = [], moved: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            let name = word.firstIndex(of: "=").map { String(word[..<$0]) } ?? word
            if let takesValue = Self.globalOption(name)?.takesValue {
                let inline = word.contains("=")
                guard !takesValue || inline || index + 1 < arguments.endIndex else { break }
                moved.append(word)
                if takesValue && !inline {
                    moved.append(arguments[index + 1])
                    index += 1
                }
            } else if !word.hasPrefix("-"), let subcommand = Self.subcommand(named: word, of: command) {
                names.append(word)
                command = subcommand
            } else {
                break
            }
            index += 1
        }
        guard !moved.isEmpty else { return arguments }
        var rest = Array(arguments[index...])
        let terminator = rest.firstIndex(of: "--") ?? rest.endIndex
        rest.insert(contentsOf: moved, at: terminator)
        return names + rest
    }

    /// "unknown command 'staus' — did you mean `tresor status`?" when a word where a command's
    /// name belongs names none; nil when every such word is a command (or an option, or
    /// arguments begin).
    /// - Parameter arguments: the arranged command line (``arranged(_:)``).
    /// - Returns: the complaint, or nil.
    static func unknownCommand(in arguments: [String]) -> String? {
        var command: any ParsableCommand.Type = Tresor.self
        var path = ["tresor"]
        for word in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, command.configuration.defaultSubcommand == nil, !word.hasPrefix("-"), word != "help" else { return nil }
            guard let subcommand = Self.subcommand(named: word, of: command) else {
                let names = subcommands.filter { $0.configuration.shouldDisplay }.flatMap { [$0._commandName] + $0.configuration.aliases }
                let spelled = path.joined(separator: " ")
                guard let closest = NearestName.to(word, among: names) else {
                    return "unknown command '\(word)' — `\(spelled) --help` lists the commands"
                }
                return "unknown command '\(word)' — did you mean `\(spelled) \(closest)`?"
            }
            path.append(word)
            command = subcommand
        }
        return nil
    }

    /// The subcommand of `command` called `name` (or one of its aliases).
    static func subcommand(named name: String, of command: any ParsableCommand.Type) -> (any ParsableCommand.Type)? {
        command.configuration.subcommands.first { $0._commandName == name || $0.configuration.aliases.contains(name) }
    }
}
