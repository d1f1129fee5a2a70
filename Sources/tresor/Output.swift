import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol

/// Printing results and failures, as text or as JSON (`--json`).
enum Output {
    static func json<T: Encodable>(_ value: T) {
        let encoder = APICoding.encoder
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        if let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) {
            print(text)
        }
    }

    /// Runs a command body; a failure is printed (to standard error, or as JSON on standard
    /// output with `--json`) and turns into exit status 1. Error texts never hold secrets.
    static func run(json: Bool, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let apiError: APIError
            switch error {
            case let error as APIError: apiError = error
            case let error as NotesClientError: apiError = error.apiError
            case let error as ValidationError: apiError = APIError(.param, error.message)
            default: apiError = APIError(.internal, String(describing: error))
            }
            if json {
                Self.json(ErrorResponse(error: apiError))
            } else {
                var message = "tresor: \(apiError.message)"
                if let status = apiError.osStatus { message += " (OSStatus \(status))" }
                StandardStream.error.write(message + "\n")
            }
            throw ExitCode(1)
        }
    }
}
