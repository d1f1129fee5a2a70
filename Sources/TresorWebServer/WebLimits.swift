/// Request size limits of the web API (docs/WEB.md, "Limits").
enum WebLimits {
    /// An ordinary JSON body: a note's 1 MiB body, JSON-escaped, fits.
    static let jsonBytes = 8 * 1024 * 1024
    /// A lock request carries the note's sealed attachments in base64.
    static let lockBytes = 64 * 1024 * 1024
    /// One attachment uploaded through the web.
    static let attachmentBytes = 32 * 1024 * 1024
    /// Registration and sign-in, read before anyone is known: a name, passwords, an invite.
    static let signInBytes = 16 * 1024
    /// A static file served (they are all small).
    static let staticFileBytes = 8 * 1024 * 1024
}
