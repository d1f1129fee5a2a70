import ArgumentParser

/// A length of time typed on the command line — `--for` of `tresor unlock` and of
/// `tresor secret-service trust add`, `tresor approve --for-session`: a whole number with its
/// unit, `90s`, `10m`, `8h` or `7d`. A bare number is refused: `--for 3` meant as hours would
/// end in 3 seconds.
struct TimeSpan: CustomStringConvertible {
    let seconds: Int

    /// The units, by the letter that follows the number.
    private static let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400]

    /// - Parameters:
    ///   - text: what was typed.
    ///   - option: the option, for the refusal (`--for`).
    ///   - longest: the most seconds the option takes.
    /// - Throws: `ValidationError` saying what is taken, for a bare number, an unknown unit, zero,
    ///   a negative number or a span past `longest`.
    init(_ text: String, option: String, atMost longest: Int) throws {
        guard let unit = text.last.flatMap({ Self.units[$0] }), let number = Int(text.dropLast()), number > 0 else {
            throw ValidationError(
                "\(option) takes a length of time with its unit, such as 90s, 30m, 8h or 7d, not \(text.prefix(40).debugDescription)")
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: unit)
        guard !overflow, seconds <= longest else { throw ValidationError("\(option) is at most \(Words.duration(longest))") }
        self.seconds = seconds
    }

    var description: String { Words.duration(seconds) }
}
