import ArgumentParser
import Foundation
import Testing

@testable import tresor

/// Every `--for` of the CLI reads a length of time by one rule, and every line that says one
/// words it alike.
@Suite struct TimeSpanTests {
    @Test func aLengthOfTimeTakesItsUnit() throws {
        #expect(try TimeSpan("90s", option: "--for", atMost: 3600).seconds == 90)
        #expect(try TimeSpan("10m", option: "--for", atMost: 3600).seconds == 600)
        #expect(try TimeSpan("8h", option: "--for", atMost: 86400).seconds == 28_800)
        #expect(try TimeSpan("7d", option: "--for", atMost: 366 * 86400).seconds == 604_800)
    }

    @Test func aBareNumberAnUnknownUnitOrTooLongAreRefusedSayingWhatIsTaken() {
        // A bare number has no unit to guess: `--for 3` meant as hours would end in 3 seconds.
        for refused in ["3", "600", "0m", "-5m", "ten", "5w", "", "m", "9223372036854775807h"] {
            #expect(throws: ValidationError.self, "\(refused.debugDescription)") { try TimeSpan(refused, option: "--for", atMost: 3600) }
        }
        #expect {
            try TimeSpan("3", option: "--for-session", atMost: 3600)
        } throws: { error in
            "\(error)".contains("--for-session takes a length of time with its unit, such as 90s, 30m, 8h or 7d, not \"3\"")
        }
        #expect {
            try TimeSpan("2h", option: "--for", atMost: 3600)
        } throws: { error in
            "\(error)" == "--for is at most 60 min"
        }
    }

    @Test func aLengthOfTimeIsWordedAsExactlyAsAGlanceNeeds() {
        #expect(Words.duration(0) == "0 s" && Words.duration(119) == "119 s")
        #expect(Words.duration(120) == "2 min" && Words.duration(7199) == "119 min")
        #expect(Words.duration(7200) == "2 h" && Words.duration(172_799) == "47 h")
        #expect(Words.duration(172_800) == "2 d")
        #expect(WidgetText.ago(Date(timeIntervalSince1970: 0), now: Date(timeIntervalSince1970: 59)) == "just now")
        #expect(WidgetText.ago(Date(timeIntervalSince1970: 0), now: Date(timeIntervalSince1970: 600)) == "10 min ago")
    }
}
