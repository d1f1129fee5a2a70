import PropertyBased
import Testing
import TresorNotesDomain

@testable import TresorNotes

/// The merge rules of docs/FORMAT.md ("Revisions and merges"), first by example, then as
/// properties over random concurrent edits: a merge never loses a character of either side.
@Suite("Three-way merge")
struct MergeTests {
    @Test func editsOfDifferentLinesAreBothKept() {
        let base = "milk\nbread\neggs\ncheese"
        let saved = "oat milk\nbread\neggs\ncheese"
        let incoming = "milk\nbread\neggs\nblue cheese"
        #expect(ThreeWayMerge.merge(base: base, saved: saved, incoming: incoming) == .merged("oat milk\nbread\neggs\nblue cheese"))
    }

    @Test func additionsAtTheSamePlaceAreBothKeptSavedFirst() {
        let base = "list:\n- a"
        #expect(ThreeWayMerge.merge(base: base, saved: base + "\n- b", incoming: base + "\n- c") == .merged("list:\n- a\n- b\n- c"))
    }

    @Test func differentChangesOfOneLineConflict() {
        #expect(ThreeWayMerge.merge(base: "a\nb\nc", saved: "a\nB1\nc", incoming: "a\nB2\nc") == .conflict)
        // Deleting a line the other side changed is a conflict too: the change is not dropped.
        #expect(ThreeWayMerge.merge(base: "a\nb\nc", saved: "a\nB\nc", incoming: "a\nb\nC") == .merged("a\nB\nC"), "neighbours merge")
        #expect(ThreeWayMerge.merge(base: "a\nb\nc", saved: "a\nc", incoming: "a\nb!\nc") == .conflict)
    }

    @Test func theSameChangeOnBothSidesIsTakenOnce() {
        #expect(ThreeWayMerge.merge(base: "a\nb", saved: "a\nx\nb", incoming: "a\nx\nb") == .merged("a\nx\nb"))
        #expect(ThreeWayMerge.merge(base: "a\nb\nc", saved: "a\nB\nc\nd", incoming: "a\nB\nc") == .merged("a\nB\nc\nd"))
    }

    @Test func oneSideUnchangedTakesTheOther() {
        #expect(ThreeWayMerge.merge(base: "x", saved: "x", incoming: "y") == .merged("y"))
        #expect(ThreeWayMerge.merge(base: "x", saved: "y", incoming: "x") == .merged("y"))
        #expect(ThreeWayMerge.merge(base: "", saved: "", incoming: "new") == .merged("new"))
        // A final newline is a line of its own: adding after a text without one merges.
        #expect(ThreeWayMerge.merge(base: "a", saved: "a\nb", incoming: "z\na") == .merged("z\na\nb"))
    }

    @Test func titlesMergeAsOneValue() {
        #expect(ThreeWayMerge.mergeValue(base: "T", saved: "T", incoming: "U") == "U")
        #expect(ThreeWayMerge.mergeValue(base: "T", saved: "S", incoming: "T") == "S")
        #expect(ThreeWayMerge.mergeValue(base: "T", saved: "S", incoming: "U") == nil)
    }

    /// A base of distinct lines and two random edits of it (keep, delete, replace, insert —
    /// every new line distinct too), so each line says where it came from.
    struct Scenario {
        var base: [String]
        var saved: [String]
        var incoming: [String]

        init(baseCount: Int, savedOps: [Int], incomingOps: [Int]) {
            base = (0..<baseCount).map { "base line \($0)" }
            saved = Self.edit(base, savedOps, label: "saved")
            incoming = Self.edit(base, incomingOps, label: "incoming")
        }

        /// Op per position: 0–4 keep, 5 delete, 6 replace, 7 insert before, 8 insert after, 9 two inserts.
        static func edit(_ base: [String], _ ops: [Int], label: String) -> [String] {
            var result: [String] = []
            var fresh = 0
            func new() -> String { fresh += 1; return "\(label) line \(fresh)" }
            for (index, line) in base.enumerated() {
                switch index < ops.count ? ops[index] : 0 {
                case 5: break
                case 6: result.append(new())
                case 7: result += [new(), line]
                case 8: result += [line, new()]
                case 9: result += [new(), line, new()]
                default: result.append(line)
                }
            }
            if ops.count > base.count, ops[base.count] >= 7 { result.append(new()) }
            return result
        }
    }

    @Test func randomConcurrentEditsNeverLoseALine() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...30), Gen.int(in: 0...9).array(of: 0...32), Gen.int(in: 0...9).array(of: 0...32)) {
            count, savedOps, incomingOps in
            let scenario = Scenario(baseCount: count, savedOps: savedOps, incomingOps: incomingOps)
            let outcome = ThreeWayMerge.merge(
                base: scenario.base.joined(separator: "\n"), saved: scenario.saved.joined(separator: "\n"),
                incoming: scenario.incoming.joined(separator: "\n"))
            guard case .merged(let text) = outcome else {
                // A conflict merges nothing: the store keeps both versions whole (RevisionTests).
                // It happens only when both sides changed the same base lines differently.
                #expect(Self.bothTouchTheSameBaseLine(scenario), "a conflict without overlapping edits")
                return
            }
            let merged = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let baseSet = Set(scenario.base)
            // Every line either side added is there, each side's in its own order.
            for side in [scenario.saved, scenario.incoming] {
                let added = side.filter { !baseSet.contains($0) }
                #expect(merged.filter { added.contains($0) } == added, "an added line lost or reordered")
                // And every base line the side kept is there unless the other side deleted it.
                let kept = side.filter(baseSet.contains)
                #expect(Self.isSubsequence(merged.filter(kept.contains), of: kept))
            }
            // A base line is in the result exactly when both sides kept it.
            for line in scenario.base {
                #expect(merged.contains(line) == (scenario.saved.contains(line) && scenario.incoming.contains(line)), "\(line)")
            }
            #expect(merged.count == Set(merged).count, "a line doubled")
        }
    }

    @Test func randomTextMergesNeverLoseACharacter() async {
        // Arbitrary characters, empty lines and no final newline: every character a side
        // inserted (measured against the base) is in the merged text.
        let line = Gen.element(of: ["", "a", "b", "ab", " ", "é", "👍🏽", "\t", "a b"]).map { $0 ?? "" }
        await propertyCheck(count: 400, input: line.array(of: 0...12), line.array(of: 0...12), line.array(of: 0...12)) { base, saved, incoming in
            let outcome = ThreeWayMerge.merge(
                base: base.joined(separator: "\n"), saved: saved.joined(separator: "\n"), incoming: incoming.joined(separator: "\n"))
            guard case .merged(let text) = outcome else { return }
            let merged = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // Lines as the texts have them ([] and [""] are both the empty text).
            let asText = { (lines: [String]) in
                lines.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            }
            let mergedCounts = Self.counts(merged), baseCounts = Self.counts(asText(base))
            for side in [asText(saved), asText(incoming)] {
                // A side's lines beyond the base's (by count) all survive.
                for (value, number) in Self.counts(side) where number > baseCounts[value, default: 0] {
                    #expect(mergedCounts[value, default: 0] >= number - baseCounts[value, default: 0], "lost \"\(value)\"")
                }
            }
        }
    }

    @Test func mergingIsSymmetricWhereItSucceeds() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...20), Gen.int(in: 0...9).array(of: 0...22), Gen.int(in: 0...9).array(of: 0...22)) {
            count, a, b in
            let scenario = Scenario(baseCount: count, savedOps: a, incomingOps: b)
            let base = scenario.base.joined(separator: "\n")
            let one = ThreeWayMerge.merge(
                base: base, saved: scenario.saved.joined(separator: "\n"), incoming: scenario.incoming.joined(separator: "\n"))
            let other = ThreeWayMerge.merge(
                base: base, saved: scenario.incoming.joined(separator: "\n"), incoming: scenario.saved.joined(separator: "\n"))
            // Same lines either way (only the order of same-place additions may differ).
            switch (one, other) {
            case (.conflict, .conflict): break
            case (.merged(let x), .merged(let y)): #expect(Set(x.split(separator: "\n")) == Set(y.split(separator: "\n")))
            default: Issue.record("a merge succeeded one way and not the other")
            }
        }
    }

    static func counts(_ lines: [String]) -> [String: Int] { lines.reduce(into: [:]) { $0[$1, default: 0] += 1 } }

    static func isSubsequence(_ a: [String], of b: [String]) -> Bool {
        var index = b.startIndex
        for line in a {
            guard let found = b[index...].firstIndex(of: line) else { return false }
            index = found + 1
        }
        return true
    }

    /// Whether both sides changed something between the same two base lines kept by both —
    /// the only case where a conflict may arise (nothing both kept separates the changes).
    static func bothTouchTheSameBaseLine(_ scenario: Scenario) -> Bool {
        let stable = scenario.base.filter { scenario.saved.contains($0) && scenario.incoming.contains($0) }
        let stableIndex = Dictionary(uniqueKeysWithValues: stable.enumerated().map { ($1, $0) })
        func touched(_ side: [String]) -> Set<Int> {
            var segments = Set<Int>()
            // A base line this side removed: the segment it lies in.
            var seen = 0
            for line in scenario.base {
                if let index = stableIndex[line] { seen = index + 1 } else if !side.contains(line) { segments.insert(seen) }
            }
            // A line this side added: the segment after the stable lines before it.
            seen = 0
            for line in side {
                if let index = stableIndex[line] { seen = index + 1 } else if !scenario.base.contains(line) { segments.insert(seen) }
            }
            return segments
        }
        return !touched(scenario.saved).isDisjoint(with: touched(scenario.incoming))
    }
}
