import Foundation
import TresorProtocol

extension Harness {
    /// A raw request with curl over the daemon's socket: a program that is no client of ours (and,
    /// unless registered, no application). The body goes through a file, never the command line.
    /// - Returns: the HTTP status, and the body answered.
    func curl(_ method: String, _ path: String, body: Data? = nil) throws -> (status: Int, body: String) {
        let bodyFile = root.appendingPathComponent("body")
        var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket", paths.socket.path, "-X", method]
        if let body {
            try body.write(to: bodyFile)
            arguments += ["-H", "Content-Type: application/json", "--data-binary", "@" + bodyFile.path]
        }
        let result = try run(URL(fileURLWithPath: "/usr/bin/curl"), arguments + ["http://tresord" + path])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
    }
}

/// The error code of an error answer's body, or nil when it is none.
func apiErrorCode(in body: String) -> APIError.Code? {
    try? JSONDecoder().decode(ErrorResponse.self, from: Data(body.utf8)).error.code
}
