import Foundation

/// The origin a reverse proxy serves the web client as: `https://notes.example.com` (a port
/// when not the scheme's own), no path.
public struct PublicOrigin: Sendable, Equatable {
    /// `scheme://host[:port]`, lowercased.
    public var text: String
    public var isHTTPS: Bool

    /// - Parameter value: the configured origin.
    /// - Throws: ``WebConfigurationError`` for anything but an http(s) origin without a path.
    public init(parsing value: String) throws {
        let lowered = value.lowercased()
        let problem = WebConfigurationError("the public origin is http(s)://HOST[:PORT] with no path, like https://notes.example.com")
        guard let url = URL(string: lowered), let scheme = url.scheme, ["http", "https"].contains(scheme), let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil
        else { throw problem }
        let defaultPort = scheme == "https" ? 443 : 80
        let hostText = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        text = "\(scheme)://\(hostText)" + (url.port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
        isHTTPS = scheme == "https"
    }
}
