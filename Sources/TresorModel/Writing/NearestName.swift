/// The name a mistyped one was meant to be, for "did you mean …": a command of `tresor`, a
/// setting of `config.json`. The one way Tresor guesses a name.
public enum NearestName {
    /// The name nearest `word`, compared without case: at most two edits away (a third for
    /// words longer than six characters); else the one `word` starts; else the one that starts
    /// as `word` does for half of it and at least four characters (`autoLockMinutes` for
    /// `autoLockSeconds`), the nearest of those.
    /// - Parameters:
    ///   - word: what was typed.
    ///   - names: the names there are.
    /// - Returns: the name meant, or nil when none is near.
    public static func to(_ word: String, among names: [String]) -> String? {
        let typed = word.lowercased()
        guard !typed.isEmpty else { return nil }
        let scored = names.map { (name: $0, edits: editDistance(typed, $0.lowercased()), shared: sharedStart(typed, $0.lowercased())) }
        if let best = scored.min(by: { $0.edits < $1.edits }), best.edits <= (word.count > 6 ? 3 : 2) { return best.name }
        if let started = names.first(where: { $0.lowercased().hasPrefix(typed) }) { return started }
        let longest = scored.map(\.shared).max() ?? 0
        guard longest >= max(4, (typed.count + 1) / 2) else { return nil }
        return scored.filter { $0.shared == longest }.min { $0.edits < $1.edits }?.name
    }

    /// How many characters `a` and `b` start with alike.
    static func sharedStart(_ a: String, _ b: String) -> Int { zip(a, b).prefix { $0 == $1 }.count }

    /// Levenshtein distance, with a transposition counting as one edit.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }
}
