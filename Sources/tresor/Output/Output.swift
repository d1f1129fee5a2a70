import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// Printing results and failures, as text or as JSON (`--json`, docs/CLI-JSON.md).
enum Output {
    /// The CLI's JSON: sorted keys, indented, dates in ISO 8601, data in base64, `/` as it is.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    /// Prints `value` as the CLI's JSON on standard output (a daemon status with its holds'
    /// dates in ISO 8601 too: ``ReshapedForJSON``).
    static func json<T: Encodable>(_ value: T) {
        if let shaped = value as? any ReshapedForJSON, let reshaped = try? shaped.cliJSON {
            return json(reshaped)
        }
        if let data = try? encoder.encode(value) {
            StandardStream.output.write(data + Data("\n".utf8))
        }
    }

    /// Prints `failure` as `--json` prints every failure: `{"error": {...}}` on standard output.
    static func json(failure: APIError) {
        json(FailureJSON(failure))
    }

    /// Runs a command body; a failure is printed — in words on standard error, with its codes
    /// under `--verbose`, or as JSON on standard output with `--json` — and turns into exit
    /// status 1. Error texts never hold secrets.
    /// - Parameters:
    ///   - options: the command's global options (`--json`, `--verbose`).
    ///   - keychain: the keychain the command works on (`--keychain NAME`), so that a locked
    ///     one is named in the message.
    ///   - body: the command.
    /// - Throws: `ExitCode(1)` after printing a failure; an `ExitCode` the body throws.
    static func run(_ options: GlobalOptions, keychain: String? = nil, _ body: () throws -> Void) throws {
        try run(json: options.json, verbose: options.verbose, keychain: keychain, body)
    }

    /// ``run(_:keychain:_:)`` for a command without the global options' `--json`.
    static func run(json: Bool, verbose: Bool = false, keychain: String? = nil, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let failure = Failure(error, keychain: keychain)
            if json {
                Self.json(failure: failure.apiError)
            } else {
                StandardStream.error.write("tresor: \(verbose ? failure.verboseText : failure.text)\n")
            }
            throw ExitCode(1)
        }
    }
}

/// `{"error": {...}}` as `--json` prints it: the daemon's error with its `OSStatus`.
private struct FailureJSON: Encodable {
    let error: Body

    init(_ error: APIError) { self.error = Body(error) }

    struct Body: Encodable {
        let code: APIError.Code
        let message: String
        let osStatus: Int32?
        let retryAfterSeconds: Int?
        let hint: String?
        let failedAttempts: Int?
        let lock: LockInfo?

        init(_ error: APIError) {
            code = error.code
            message = error.message
            osStatus = error.osStatus
            retryAfterSeconds = error.retryAfterSeconds
            hint = error.hint
            failedAttempts = error.failedAttempts
            lock = error.lock
        }
    }
}
