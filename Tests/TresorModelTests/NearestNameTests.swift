import Testing
import TresorModel

/// "Did you mean …": a typo, a letter case, a start typed, a unit mistaken — and nothing when
/// nothing is near.
@Suite struct NearestNameTests {
    static let commands = ["status", "unlock", "lock", "item", "note", "sync", "secret-service"]
    static let settings = ["autoLockSeconds", "lockWithScreen", "webPort", "webSessionSeconds", "webSessionIdleSeconds", "desktopPromptSeconds"]

    @Test(arguments: [
        ("staus", commands, "status"), ("unlokc", commands, "unlock"), ("secret", commands, "secret-service"),
        ("lockwithscreen", settings, "lockWithScreen"), ("WEBPORT", settings, "webPort"),
        ("autoLockMinutes", settings, "autoLockSeconds"), ("webSessionMinutes", settings, "webSessionSeconds"),
        ("desktopPromptTimeout", settings, "desktopPromptSeconds"),
    ])
    func aNameMistypedIsFound(typed: String, names: [String], meant: String) {
        #expect(NearestName.to(typed, among: names) == meant)
    }

    @Test(arguments: ["colour", "x", "backup", "autoUpdate", ""])
    func nothingNearIsNothing(typed: String) {
        #expect(NearestName.to(typed, among: Self.commands + Self.settings) == nil, "\(typed)")
    }
}
