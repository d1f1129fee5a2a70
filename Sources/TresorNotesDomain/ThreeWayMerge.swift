/// Merges two edits of one text made from the same earlier version, line by line (a line is
/// a paragraph of a note), as `diff3` does (docs/FORMAT.md, "Revisions and merges"):
///
/// - a stretch of lines only one side changed takes that side's lines;
/// - a stretch both sides changed the same way is taken once;
/// - lines both sides *inserted* at the same place (nothing of the base between) are kept,
///   the saved side's first — two people adding to the end of a list keep both additions;
/// - a stretch both sides changed, with as many lines on each side as in the base, is merged
///   line by line (neighbouring lines edited by two people);
/// - a stretch both sides changed differently otherwise is a **conflict**: nothing is merged,
///   and the caller keeps both versions whole (a conflict copy).
///
/// So a merge never loses a character of either side: every line either side added is in
/// the result, in that side's order, and a line is dropped only when one side deleted it and
/// the other left it alone. The web client's `js/merge.js` follows the same rules.
public enum ThreeWayMerge {
    /// What a merge gives.
    public enum Outcome: Equatable, Sendable {
        /// Both edits fit together: the merged text.
        case merged(String)
        /// Both sides changed the same lines differently.
        case conflict
    }

    /// The most cells (lines × lines) one comparison may take; a larger changed stretch is
    /// compared as one block (and both sides changing it is then a conflict — never a loss).
    static let maximumComparisonCells = 4_000_000

    /// Merges `incoming` (an edit made from `base`) into `saved` (what is stored now, also
    /// made from `base`).
    /// - Parameters:
    ///   - base: the version both edits started from.
    ///   - saved: the version stored now.
    ///   - incoming: the edit that arrived late.
    /// - Returns: the merged text, or `.conflict`.
    public static func merge(base: String, saved: String, incoming: String) -> Outcome {
        if saved == incoming || incoming == base { return .merged(saved) }
        if saved == base { return .merged(incoming) }
        var numbering = LineNumbering()
        let baseLines = numbering.lines(of: base), savedLines = numbering.lines(of: saved), incomingLines = numbering.lines(of: incoming)
        guard let lines = mergeLines(base: baseLines, saved: savedLines, incoming: incomingLines) else { return .conflict }
        return .merged(lines.map { numbering.text[$0] }.joined(separator: "\n"))
    }

    /// Merges a single value (a title): taken from the side that changed it, or a conflict
    /// when both changed it differently.
    /// - Returns: the merged value, or nil on a conflict.
    public static func mergeValue<Value: Equatable>(base: Value, saved: Value, incoming: Value) -> Value? {
        if saved == incoming || incoming == base { return saved }
        if saved == base { return incoming }
        return nil
    }

    /// diff3 over line numbers: nil on a conflict.
    static func mergeLines(base: [Int], saved: [Int], incoming: [Int]) -> [Int]? {
        let toSaved = matches(base, saved), toIncoming = matches(base, incoming)
        var result: [Int] = []
        var o = 0, a = 0, b = 0
        while o < base.count || a < saved.count || b < incoming.count {
            if o < base.count, toSaved[o] == a, toIncoming[o] == b {
                result.append(base[o])
                o += 1; a += 1; b += 1
                continue
            }
            // The unstable stretch ends at the next base line both sides kept.
            var end = o
            while end < base.count, toSaved[end] == nil || toIncoming[end] == nil { end += 1 }
            let savedEnd = end < base.count ? toSaved[end]! : saved.count
            let incomingEnd = end < base.count ? toIncoming[end]! : incoming.count
            let original = base[o..<end], mine = saved[a..<savedEnd], theirs = incoming[b..<incomingEnd]
            if mine.elementsEqual(original) {
                result += theirs
            } else if theirs.elementsEqual(original) || theirs.elementsEqual(mine) {
                result += mine
            } else if original.isEmpty {
                result += mine
                result += theirs
            } else if original.count == mine.count, original.count == theirs.count {
                // Neighbouring lines changed on either side (no line between kept by both):
                // line by line, each position from the side that changed it.
                for (line, (one, other)) in zip(original, zip(mine, theirs)) {
                    guard let merged = mergeValue(base: line, saved: one, incoming: other) else { return nil }
                    result.append(merged)
                }
            } else {
                return nil
            }
            o = end; a = savedEnd; b = incomingEnd
        }
        return result
    }

    /// For each line of `a`, the line of `b` it is matched with in a longest common
    /// subsequence (nil: not kept). Common ends are matched first; the middle by dynamic
    /// programming, or — past ``maximumComparisonCells`` — not at all.
    static func matches(_ a: [Int], _ b: [Int]) -> [Int?] {
        var result = [Int?](repeating: nil, count: a.count)
        var prefix = 0
        while prefix < a.count, prefix < b.count, a[prefix] == b[prefix] {
            result[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, a[a.count - 1 - suffix] == b[b.count - 1 - suffix] {
            result[a.count - 1 - suffix] = b.count - 1 - suffix
            suffix += 1
        }
        let n = a.count - prefix - suffix, m = b.count - prefix - suffix
        guard n > 0, m > 0, n * m <= maximumComparisonCells else { return result }
        // lengths[i][j]: the LCS of a[prefix+i...] and b[prefix+j...], in one flat array.
        let width = m + 1
        var lengths = [Int32](repeating: 0, count: (n + 1) * width)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i * width + j] =
                    a[prefix + i] == b[prefix + j]
                    ? lengths[(i + 1) * width + j + 1] + 1
                    : max(lengths[(i + 1) * width + j], lengths[i * width + j + 1])
            }
        }
        var i = 0, j = 0
        while i < n, j < m {
            if a[prefix + i] == b[prefix + j] {
                result[prefix + i] = prefix + j
                i += 1; j += 1
            } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return result
    }

    /// Gives each distinct line a number, so lines compare as integers.
    struct LineNumbering {
        var numbers: [Substring: Int] = [:]
        var text: [Substring] = []

        mutating func lines(of string: String) -> [Int] {
            string.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                if let known = numbers[line] { return known }
                numbers[line] = text.count
                text.append(line)
                return text.count - 1
            }
        }
    }
}
