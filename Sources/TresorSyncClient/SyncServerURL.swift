import Foundation

/// A sync server's address as a device may use it: `https://` anywhere, plain `http://` only
/// to a loopback host (a test, or a server on this machine), so a device never sends its
/// account password or its records in the clear over a network.
public struct SyncServerURL: Sendable, Equatable, CustomStringConvertible {
    /// The server's base URL, without a trailing slash; `/v1/sync/…` is appended to it.
    public let base: URL

    /// Checks `text` as a sync server's address.
    /// - Parameter text: what the user typed, e.g. `https://tresor.example.org`.
    /// - Throws: ``SyncClientError/badServerURL(_:)`` for a URL that is not `http(s)://HOST[:PORT][/PATH]`,
    ///   carries a user, query or fragment, or is `http://` to a host that is not loopback.
    public init(_ text: String) throws {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw SyncClientError.badServerURL("\"\(text)\" is not an http:// or https:// URL with a host") }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil else {
            throw SyncClientError.badServerURL("a server URL has no user, password, query or fragment")
        }
        switch scheme {
        case "https": break
        case "http":
            guard Self.isLoopback(host) else {
                throw SyncClientError.badServerURL("plain http:// is accepted only for a loopback host (127.0.0.1, ::1, localhost); use https://")
            }
        default: throw SyncClientError.badServerURL("the scheme is \(scheme): use https:// (or http:// to a loopback host)")
        }
        var trimmed = components
        trimmed.scheme = scheme
        while trimmed.path.hasSuffix("/") { trimmed.path.removeLast() }
        guard let url = trimmed.url else { throw SyncClientError.badServerURL("\"\(text)\" is not a URL") }
        base = url
    }

    /// Whether `host` names this machine: `localhost`, an address of 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if bare == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    public var description: String { base.absoluteString }

    /// The URL of a relay path (`/v1/sync/…`) with an optional query.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.path += path
        if !query.isEmpty { components.queryItems = query }
        return components.url!
    }
}
