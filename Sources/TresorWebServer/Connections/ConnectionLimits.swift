/// How many connections the web server holds at once, and for whom (docs/WEB.md,
/// "Availability"): every client but the owner has a share of its own, and all of them
/// together leave room for the owner, so nobody else can take the slots the owner's browser
/// needs — another local user holding hundreds of idle connections included.
public struct ConnectionLimits: Sendable, Equatable {
    /// Connections at once, all clients together (`webMaximumConnections`); beyond it new
    /// connections wait to be accepted.
    public var total: Int
    /// Connections at once of one client that is not the owner (`webConnectionsPerClient`): one
    /// other local user on loopback, one address beyond it, one client a trusted proxy names.
    public var perClient: Int
    /// Connections no client but the owner may take (`webConnectionsReservedForOwner`).
    public var reservedForOwner: Int

    public static let defaultTotal = 64
    public static let defaultPerClient = 8
    public static let defaultReservedForOwner = 16

    /// - Throws: ``WebConfigurationError`` when the numbers leave no room for anyone.
    init(total: Int?, perClient: Int?, reservedForOwner: Int?) throws {
        self.total = total ?? Self.defaultTotal
        self.perClient = perClient ?? Self.defaultPerClient
        self.reservedForOwner = reservedForOwner ?? Self.defaultReservedForOwner
        guard self.total >= 1 else { throw WebConfigurationError("webMaximumConnections must be 1 or more") }
        guard self.perClient >= 1 else { throw WebConfigurationError("webConnectionsPerClient must be 1 or more") }
        guard (0..<self.total).contains(self.reservedForOwner) else {
            throw WebConfigurationError("webConnectionsReservedForOwner must be 0 or more and less than webMaximumConnections")
        }
    }
}
