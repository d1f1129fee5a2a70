/// Where a web session was signed in from, as `tresor web sessions` shows it, so that the owner
/// can tell which session to end: the client's address (behind a trusted proxy, the one it
/// forwards) and its browser and system in words, read from the `User-Agent` at sign-in. Nothing
/// else of the header is kept.
public struct WebSessionClient: Sendable, Equatable {
    /// The client's IP address.
    public var address: String?
    /// Its browser and system, "Firefox on Linux"; nil when the header names none Tresor knows.
    public var browser: String?

    public init(address: String?, browser: String?) {
        self.address = address
        self.browser = browser
    }

    /// The client of a sign-in from `address` whose `User-Agent` is `userAgent`.
    /// - Parameters:
    ///   - address: the client's address.
    ///   - userAgent: the request's `User-Agent`, if any.
    public init(address: String, userAgent: String?) {
        self.init(address: address, browser: userAgent.flatMap(Self.browser(fromUserAgent:)))
    }

    /// Browsers by the token their `User-Agent` carries, the more specific first: Edge, Opera and
    /// Samsung Internet also say "Chrome", Chrome also says "Safari".
    private static let browsers: [(token: String, name: String)] = [
        ("Edg/", "Edge"), ("EdgA/", "Edge"), ("EdgiOS/", "Edge"), ("OPR/", "Opera"), ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chromium/", "Chromium"), ("Chrome/", "Chrome"),
        ("Safari/", "Safari"), ("curl/", "curl"), ("python-requests/", "Python requests"),
    ]
    /// Systems by their token, the more specific first: Android also says "Linux", iOS "like Mac OS X".
    private static let systems: [(token: String, name: String)] = [
        ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"), ("Windows", "Windows"),
        ("Macintosh", "macOS"), ("Mac OS X", "macOS"), ("Linux", "Linux"),
    ]

    /// "Firefox on Linux" from a `User-Agent`; the browser alone when no system is named, nil when
    /// no browser is.
    /// - Parameter userAgent: the header's value.
    /// - Returns: the browser and system in words.
    public static func browser(fromUserAgent userAgent: String) -> String? {
        guard let browser = browsers.first(where: { userAgent.contains($0.token) })?.name else { return nil }
        guard let system = systems.first(where: { userAgent.contains($0.token) })?.name else { return browser }
        return "\(browser) on \(system)"
    }
}
