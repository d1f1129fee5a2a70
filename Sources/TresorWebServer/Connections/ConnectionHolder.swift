/// Whom a connection (or, behind a trusted proxy, a request) is counted for.
enum ConnectionHolder: Hashable, Sendable {
    /// The home's owner: a loopback connection of the uid `tresord` runs as. Only the total limits it.
    case owner
    /// A reverse proxy of `webTrustedProxies`: every connection it makes is its clients', so
    /// its connections count like the owner's and each request counts for the client it names.
    case trustedProxy
    /// Anyone else: `uid N` (another local user on loopback), `uid unknown`, or an address.
    case client(String)
}
