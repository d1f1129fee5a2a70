/// How the daemon keeps socket API connections (docs/API.md, "Connections").
public enum SocketConnections {
    /// How long the daemon keeps a connection that sends nothing, unless the daemon's
    /// `config.json` sets `socketIdleSeconds`. Every answer states the daemon's own figure in
    /// `Keep-Alive: timeout=N`; a client that has not had an answer yet goes by this one.
    public static let defaultIdleSeconds = 120

    /// The seconds of a `Keep-Alive` header's `timeout=N` (RFC 9112's keep-alive parameter).
    /// - Parameter header: the header's value, e.g. `timeout=120` or `timeout=5, max=100`.
    /// - Returns: N when it is a whole number of seconds above 0; else nil.
    public static func timeout(inKeepAlive header: String) -> Int? {
        for parameter in header.split(separator: ",") {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.filter { $0 != " " && $0 != "\t" } }
            guard pair.count == 2, pair[0].lowercased() == "timeout" else { continue }
            guard let seconds = Int(pair[1]), seconds > 0 else { return nil }
            return seconds
        }
        return nil
    }
}
