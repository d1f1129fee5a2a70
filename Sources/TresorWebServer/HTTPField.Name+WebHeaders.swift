import HTTPTypes

/// The header names the web server reads or sets that HTTPTypes does not name.
extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let xTresorCSRF = HTTPField.Name("X-Tresor-CSRF")!
    static let xTresorOriginToken = HTTPField.Name("X-Tresor-Origin-Token")!
    /// An uploaded attachment's name, percent-encoded UTF-8: a name in a URL would be in every
    /// proxy's access log.
    static let tresorAttachmentName = HTTPField.Name("Tresor-Attachment-Name")!
}
